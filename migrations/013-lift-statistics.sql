-- Upgrade of schema version 12 to 13: confidence intervals for campaign lift (reclaim.wilson_interval,
-- reclaim.newcombe_interval, the view reclaim.campaign_lift_statistics), so that "is this lift real?" has an
-- answer in SQL the operator owns, in /console and in `reclaim campaigns report`.
--
-- reclaim-schema-version: 13

-- 95% confidence intervals, in SQL the operator owns (checked against statsmodels in the tests).
CREATE FUNCTION reclaim.wilson_interval(successes bigint, trials bigint, OUT lower double precision, OUT upper double precision)
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n),
           (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
    FROM (SELECT successes::float8 / nullif(trials, 0) AS p, nullif(trials, 0)::float8 AS n, 1.959963984540054::float8 AS z) AS v
$$;
COMMENT ON FUNCTION reclaim.wilson_interval(bigint, bigint) IS 'Wilson score 95% interval of successes/trials (NULLs for no trials): an interval that stays inside 0..1 and behaves for small groups and for 0 or all successes.';

CREATE FUNCTION reclaim.newcombe_interval(x1 bigint, n1 bigint, x2 bigint, n2 bigint, OUT lower double precision, OUT upper double precision)
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p1 - p2) - sqrt((p1 - w1.lower) ^ 2 + (w2.upper - p2) ^ 2),
           (p1 - p2) + sqrt((w1.upper - p1) ^ 2 + (p2 - w2.lower) ^ 2)
    FROM (SELECT x1::float8 / nullif(n1, 0) AS p1, x2::float8 / nullif(n2, 0) AS p2) AS v,
         reclaim.wilson_interval(x1, n1) AS w1, reclaim.wilson_interval(x2, n2) AS w2
$$;
COMMENT ON FUNCTION reclaim.newcombe_interval(bigint, bigint, bigint, bigint) IS 'Newcombe''s hybrid score 95% interval of x1/n1 - x2/n2, from the two Wilson intervals (NULLs when a group is empty).';

CREATE VIEW reclaim.campaign_lift_statistics AS
SELECT l.bundle_id, l.environment, l.campaign_id, l.treated, l.held_out,
       l.treated_redeemed::float8 / nullif(l.treated, 0)                            AS redemption_rate,
       r.lower AS redemption_rate_lower, r.upper AS redemption_rate_upper,
       l.treated_retained_30d::float8 / nullif(l.treated, 0)                        AS treated_retention,
       t.lower AS treated_retention_lower, t.upper AS treated_retention_upper,
       l.held_out_retained_30d::float8 / nullif(l.held_out, 0)                      AS held_out_retention,
       h.lower AS held_out_retention_lower, h.upper AS held_out_retention_upper,
       l.treated_retained_30d::float8 / nullif(l.treated, 0)
           - l.held_out_retained_30d::float8 / nullif(l.held_out, 0)                AS retention_lift,
       d.lower AS retention_lift_lower, d.upper AS retention_lift_upper,
       CASE WHEN l.treated = 0 OR l.held_out = 0 THEN 'no holdout to compare'
            WHEN d.lower > 0 THEN 'better'
            WHEN d.upper < 0 THEN 'worse'
            ELSE 'not yet distinguishable' END                                          AS verdict,
       -- The group size (each group) at which a difference this large would be distinguishable, by the normal
       -- approximation n = z^2 (p1 q1 + p2 q2) / d^2; NULL when it already is, or there is no difference to see.
       CASE WHEN d.lower <= 0 AND d.upper >= 0 AND rates.pt <> rates.ph
            THEN ceil(1.959963984540054 ^ 2 * (rates.pt * (1 - rates.pt) + rates.ph * (1 - rates.ph)) / (rates.pt - rates.ph) ^ 2)::bigint
       END AS needed_per_group
FROM reclaim.campaign_lift l
CROSS JOIN LATERAL reclaim.wilson_interval(l.treated_redeemed, l.treated) AS r
CROSS JOIN LATERAL reclaim.wilson_interval(l.treated_retained_30d, l.treated) AS t
CROSS JOIN LATERAL reclaim.wilson_interval(l.held_out_retained_30d, l.held_out) AS h
CROSS JOIN LATERAL reclaim.newcombe_interval(l.treated_retained_30d, l.treated, l.held_out_retained_30d, l.held_out) AS d
CROSS JOIN LATERAL (SELECT l.treated_retained_30d::float8 / nullif(l.treated, 0) AS pt,
                           l.held_out_retained_30d::float8 / nullif(l.held_out, 0) AS ph) AS rates;
COMMENT ON VIEW reclaim.campaign_lift_statistics IS 'campaign_lift with 95% confidence intervals: Wilson for each proportion, Newcombe for the retention lift (treated minus held out), and a verdict: better or worse when the lift''s interval excludes 0, else not yet distinguishable, with the group size at which the observed lift would be.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.treated IS 'Subscribers whose first decision of this campaign offered.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.held_out IS 'Subscribers whose first decision of this campaign held them out.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.redemption_rate IS 'Share of the treated who redeemed an offer of this campaign.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.redemption_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.redemption_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.treated_retention IS 'Share of the treated retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.treated_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.treated_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.held_out_retention IS 'Share of the held out retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.held_out_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.held_out_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.retention_lift IS 'treated_retention minus held_out_retention.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.retention_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.retention_lift_upper IS 'Its 95% Newcombe interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.verdict IS 'better, worse, not yet distinguishable, or no holdout to compare.';
COMMENT ON COLUMN reclaim.campaign_lift_statistics.needed_per_group IS 'For not yet distinguishable: about how many subscribers each group needs before a lift this large would be distinguishable.';
