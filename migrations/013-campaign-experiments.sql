-- Upgrade of schema version 12 to 13: campaign experiments. A campaign may list variants (an experiment's arms):
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- every decision that offered, and its offer, records the variant. Confidence intervals for each variant's lift
-- against the campaign's holdout (reclaim.wilson_interval, reclaim.newcombe_interval, the views
-- reclaim.campaign_variant_counts and reclaim.campaign_variant_lift) answer "is this lift real?" in SQL the
-- operator owns, in /console and in `reclaim campaigns report`.
--
-- reclaim-schema-version: 13

ALTER TABLE reclaim.campaign_decisions ADD COLUMN variant_id text;
ALTER TABLE reclaim.offers ADD COLUMN variant_id text;
COMMENT ON COLUMN reclaim.campaign_decisions.variant_id IS 'For offered: the campaign variant whose offer was issued (an experiment''s arm); NULL for a campaign without variants, and for held out and skipped.';
COMMENT ON COLUMN reclaim.offers.variant_id IS 'The campaign variant it offers; NULL for a campaign without variants, and for grants.';

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

CREATE FUNCTION reclaim.campaign_variant_counts_since(since timestamptz)
RETURNS TABLE (bundle_id text, environment text, campaign_id text, variant_id text, treated bigint, held_out bigint,
               treated_redeemed bigint, treated_retained_30d bigint, held_out_retained_30d bigint)
LANGUAGE sql STABLE AS $$
WITH subjects AS (
    -- Each subscriber once per campaign: their first decision that offered or held out, with its arm.
    SELECT DISTINCT ON (d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id)
           d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.outcome, d.triggered_at,
           coalesce(d.variant_id, '') AS variant_id
    FROM reclaim.campaign_decisions d
    WHERE d.outcome IN ('offered', 'held_out')
      -- Subscribers whose first trigger in the period is on or after `since`.
      AND d.triggered_at >= since
    ORDER BY d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.triggered_at),
measured AS (
    SELECT s.bundle_id, s.environment, s.campaign_id, s.variant_id, s.outcome,
           EXISTS (SELECT 1 FROM reclaim.offers o JOIN reclaim.campaign_decisions d2 ON d2.id = o.decision_id
                   WHERE d2.campaign_id = s.campaign_id AND o.bundle_id = s.bundle_id AND o.environment = s.environment
                     AND o.original_transaction_id = s.original_transaction_id AND o.state = 'redeemed') AS redeemed,
           coalesce(sub.expires_at > s.triggered_at + interval '30 days', false) AS retained
    FROM subjects s
    LEFT JOIN reclaim.subscriptions sub
      ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id),
treated AS (
    SELECT bundle_id, environment, campaign_id, variant_id, count(*) AS n, count(*) FILTER (WHERE redeemed) AS redeemed,
           count(*) FILTER (WHERE retained) AS retained
    FROM measured WHERE outcome = 'offered' GROUP BY 1, 2, 3, 4),
held AS (
    SELECT bundle_id, environment, campaign_id, count(*) AS n, count(*) FILTER (WHERE retained) AS retained
    FROM measured WHERE outcome = 'held_out' GROUP BY 1, 2, 3)
SELECT coalesce(t.bundle_id, h.bundle_id) AS bundle_id, coalesce(t.environment, h.environment) AS environment,
       coalesce(t.campaign_id, h.campaign_id) AS campaign_id, coalesce(t.variant_id, '') AS variant_id,
       coalesce(t.n, 0) AS treated, coalesce(h.n, 0) AS held_out, coalesce(t.redeemed, 0) AS treated_redeemed,
       coalesce(t.retained, 0) AS treated_retained_30d, coalesce(h.retained, 0) AS held_out_retained_30d
FROM treated t
FULL JOIN held h ON h.bundle_id = t.bundle_id AND h.environment = t.environment AND h.campaign_id = t.campaign_id;
$$;
COMMENT ON FUNCTION reclaim.campaign_variant_counts_since(timestamptz) IS 'campaign_variant_counts of the subscribers first triggered on or after since (reclaim campaigns report --since).';

CREATE VIEW reclaim.campaign_variant_counts AS SELECT * FROM reclaim.campaign_variant_counts_since('-infinity');
COMMENT ON VIEW reclaim.campaign_variant_counts IS 'Per campaign, environment and variant: subscribers treated with that variant (their first decision offered it) against the campaign''s held-out group, with redemptions and 30-day retention: the counts campaign_variant_lift works on.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.variant_id IS 'The variant (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated IS 'Subscribers whose first decision of the campaign offered this variant.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.held_out IS 'The campaign''s held-out subscribers (the same on every variant''s row).';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated_redeemed IS 'Treated subscribers who redeemed an offer of the campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past their first trigger.';

CREATE FUNCTION reclaim.campaign_variant_lift_since(since timestamptz)
RETURNS TABLE (bundle_id text, environment text, campaign_id text, variant_id text, treated bigint, held_out bigint,
               redemption_rate float8, redemption_rate_lower float8, redemption_rate_upper float8,
               treated_retention float8, treated_retention_lower float8, treated_retention_upper float8,
               held_out_retention float8, held_out_retention_lower float8, held_out_retention_upper float8,
               retention_lift float8, retention_lift_lower float8, retention_lift_upper float8, verdict text, needed_per_group bigint)
LANGUAGE sql STABLE AS $$
SELECT c.bundle_id, c.environment, c.campaign_id, c.variant_id, c.treated, c.held_out,
       rates.redemption AS redemption_rate, r.lower AS redemption_rate_lower, r.upper AS redemption_rate_upper,
       rates.pt AS treated_retention, t.lower AS treated_retention_lower, t.upper AS treated_retention_upper,
       rates.ph AS held_out_retention, h.lower AS held_out_retention_lower, h.upper AS held_out_retention_upper,
       rates.pt - rates.ph AS retention_lift, d.lower AS retention_lift_lower, d.upper AS retention_lift_upper,
       CASE WHEN c.treated = 0 OR c.held_out = 0 THEN 'no holdout to compare'
            WHEN d.lower > 0 THEN 'better'
            WHEN d.upper < 0 THEN 'worse'
            ELSE 'not yet distinguishable' END AS verdict,
       -- The group size (each group) at which a difference this large would be distinguishable, by the normal
       -- approximation n = z^2 (p1 q1 + p2 q2) / d^2; NULL when it already is, or there is no difference to see.
       CASE WHEN d.lower <= 0 AND d.upper >= 0 AND rates.pt <> rates.ph
            -- Capped below bigint's limit: two huge groups differing by a hair would otherwise fail the whole query.
            THEN least(ceil(1.959963984540054 ^ 2 * (rates.pt * (1 - rates.pt) + rates.ph * (1 - rates.ph)) / (rates.pt - rates.ph) ^ 2), 9e18)::bigint
       END AS needed_per_group
FROM reclaim.campaign_variant_counts_since(since) c
CROSS JOIN LATERAL (SELECT c.treated_redeemed::float8 / nullif(c.treated, 0) AS redemption,
                           c.treated_retained_30d::float8 / nullif(c.treated, 0) AS pt,
                           c.held_out_retained_30d::float8 / nullif(c.held_out, 0) AS ph) AS rates
CROSS JOIN LATERAL reclaim.wilson_interval(c.treated_redeemed, c.treated) AS r
CROSS JOIN LATERAL reclaim.wilson_interval(c.treated_retained_30d, c.treated) AS t
CROSS JOIN LATERAL reclaim.wilson_interval(c.held_out_retained_30d, c.held_out) AS h
CROSS JOIN LATERAL reclaim.newcombe_interval(c.treated_retained_30d, c.treated, c.held_out_retained_30d, c.held_out) AS d;
$$;
COMMENT ON FUNCTION reclaim.campaign_variant_lift_since(timestamptz) IS 'campaign_variant_lift of the subscribers first triggered on or after since (reclaim campaigns report --since).';

CREATE VIEW reclaim.campaign_variant_lift AS SELECT * FROM reclaim.campaign_variant_lift_since('-infinity');
COMMENT ON VIEW reclaim.campaign_variant_lift IS 'Each campaign variant against the campaign''s holdout, with 95% confidence intervals: Wilson for each proportion, Newcombe for the retention lift (treated minus held out), and a verdict: better or worse when the lift''s interval excludes 0, else not yet distinguishable, with the group size at which the observed lift would be.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.variant_id IS 'The variant (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated IS 'Subscribers whose first decision of the campaign offered this variant.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out IS 'The campaign''s held-out subscribers.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate IS 'Share of the treated who redeemed an offer of the campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention IS 'Share of the treated retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention IS 'Share of the held out retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift IS 'treated_retention minus held_out_retention.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift_upper IS 'Its 95% Newcombe interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.verdict IS 'better, worse, not yet distinguishable, or no holdout to compare.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.needed_per_group IS 'For not yet distinguishable: about how many subscribers each group needs before a lift this large would be distinguishable.';
