-- Upgrade of schema version 27 to 28: the billing plan (App Store Server API 1.21's billingPlanType) on every campaign
-- decision, cancel-sheet decision and refund request, as it was when decided, and the funnel, lift and save-rate
-- views split by plan, so that monthly plans with a 12-month commitment and plans billed up front are not mixed.
-- reclaim-additive: yes
-- (Additive: nullable columns and new views; version 27's binaries name the columns they write.)
--
-- reclaim-schema-version: 28

ALTER TABLE reclaim.campaign_decisions ADD COLUMN billing_plan_type text;
COMMENT ON COLUMN reclaim.campaign_decisions.billing_plan_type IS 'The subscription''s billingPlanType when decided: MONTHLY (12-month commitment) or BILLED_UPFRONT; NULL: unknown (no transaction named one, or decided before schema version 28).';
ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN billing_plan_type text;
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.billing_plan_type IS 'The subscription''s stored billingPlanType when decided (Apple''s realtime request names none); NULL: unknown.';
ALTER TABLE reclaim.refund_requests
    ADD COLUMN billing_plan_type text,
    ADD COLUMN billing_period text CHECK (billing_period IN ('current', 'past'));
COMMENT ON COLUMN reclaim.refund_requests.billing_plan_type IS 'The refunded transaction''s billingPlanType; NULL: not named.';
COMMENT ON COLUMN reclaim.refund_requests.billing_period IS 'For a subscription: current (the refunded transaction''s period had not expired when Apple signed the request; for a 12-month commitment, Apple ends the commitment with such a refund) or past (it had); NULL: not a subscription, or no expiresDate.';

CREATE VIEW reclaim.campaign_funnel_by_plan AS
SELECT d.bundle_id,
       d.environment,
       d.campaign_id,
       coalesce(d.billing_plan_type, 'unknown')                   AS billing_plan_type,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped,
       count(o.id)                                                AS offered,
       count(o.id) FILTER (WHERE o.delivered_at IS NOT NULL)      AS delivered,
       count(o.id) FILTER (WHERE o.state = 'redeemed')            AS redeemed,
       count(o.id) FILTER (WHERE o.state = 'withdrawn')           AS withdrawn,
       count(o.id) FILTER (WHERE o.state = 'expired')             AS expired
FROM reclaim.campaign_decisions d
LEFT JOIN reclaim.offers o ON o.decision_id = d.id
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.campaign_funnel_by_plan IS 'campaign_funnel split by the subscription''s billing plan when decided: MONTHLY (12-month commitment), BILLED_UPFRONT, or unknown.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.decided IS 'Decisions (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.skipped IS 'Triggers a rule turned down.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.offered IS 'Offers issued.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.redeemed IS 'Offers Apple reported as redeemed.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.withdrawn IS 'Offers withdrawn.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.expired IS 'Offers that expired unredeemed.';

CREATE VIEW reclaim.campaign_lift_by_plan AS
WITH subjects AS (
    SELECT DISTINCT ON (d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id)
           d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.outcome, d.decided_at,
           coalesce(d.billing_plan_type, 'unknown') AS billing_plan_type
    FROM reclaim.campaign_decisions d
    WHERE d.outcome IN ('offered', 'held_out')
    ORDER BY d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.decided_at),
counts AS (
    SELECT s.bundle_id, s.environment, s.campaign_id, s.billing_plan_type,
           count(*) FILTER (WHERE s.outcome = 'offered') AS treated,
           count(*) FILTER (WHERE s.outcome = 'held_out') AS held_out,
           count(*) FILTER (WHERE s.outcome = 'offered' AND sub.expires_at > s.decided_at + interval '30 days') AS treated_retained_30d,
           count(*) FILTER (WHERE s.outcome = 'held_out' AND sub.expires_at > s.decided_at + interval '30 days') AS held_out_retained_30d
    FROM subjects s
    LEFT JOIN reclaim.subscriptions sub
      ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id
    GROUP BY 1, 2, 3, 4)
SELECT c.bundle_id, c.environment, c.campaign_id, c.billing_plan_type, c.treated, c.held_out,
       c.treated_retained_30d, c.held_out_retained_30d,
       c.treated_retained_30d::float8 / nullif(c.treated, 0) - c.held_out_retained_30d::float8 / nullif(c.held_out, 0) AS retention_lift,
       l.lower AS retention_lift_lower, l.upper AS retention_lift_upper
FROM counts c
CROSS JOIN LATERAL reclaim.newcombe_interval(c.treated_retained_30d, c.treated, c.held_out_retained_30d, c.held_out) AS l;
COMMENT ON VIEW reclaim.campaign_lift_by_plan IS 'Per campaign, environment and billing plan (when first decided): subscribers treated against held out, with 30-day retention measured from the decision (not the trigger: a decision deferred to commitmentLead before a 12-month commitment''s end is measured from then, since the customer pays until the end whatever is offered), and the retention lift with its 95% Newcombe interval.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.treated IS 'Subscribers whose first decision of the campaign offered.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.held_out IS 'Subscribers whose first decision of the campaign held them out.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past that decision.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past that decision.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift IS 'Treated minus held-out retention.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift_upper IS 'Its 95% Newcombe interval, upper bound.';

CREATE VIEW reclaim.cancel_sheet_save_rates_by_plan AS
WITH firsts AS (
    SELECT d.bundle_id, d.environment, d.campaign_id, coalesce(d.billing_plan_type, 'unknown') AS billing_plan_type, d.outcome, d.save_outcome
    FROM reclaim.cancel_sheet_decisions d
    WHERE d.repeat_of IS NULL AND NOT d.shadow AND d.outcome IN ('answered', 'held_out')),
arms AS (
    SELECT bundle_id, environment, campaign_id, billing_plan_type,
           count(*) FILTER (WHERE outcome = 'answered' AND save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE outcome = 'answered' AND save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE outcome = 'held_out' AND save_outcome = 'saved') AS held_out_saved,
           count(*) FILTER (WHERE outcome = 'held_out' AND save_outcome = 'lost') AS held_out_lost
    FROM firsts GROUP BY 1, 2, 3, 4)
SELECT a.bundle_id, a.environment, a.campaign_id, a.billing_plan_type, a.saved, a.lost,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       a.held_out_saved, a.held_out_lost, a.held_out_saved::float8 / nullif(a.held_out_saved + a.held_out_lost, 0) AS held_out_save_rate,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - a.held_out_saved::float8 / nullif(a.held_out_saved + a.held_out_lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper
FROM arms a
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, a.held_out_saved, a.held_out_saved + a.held_out_lost) AS l;
COMMENT ON VIEW reclaim.cancel_sheet_save_rates_by_plan IS 'Each cancel-sheet campaign (all arms together) against its holdout, per billing plan when decided: first decisions settled saved or lost, the save rate with a 95% Wilson interval and the lift over the holdout with a 95% Newcombe interval. cancel_sheet_save_rates splits by arm instead.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.campaign_id IS 'The cancel-sheet campaign.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.saved IS 'Answered first decisions settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lost IS 'Answered first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate IS 'saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_saved IS 'Held-out first decisions settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_lost IS 'Held-out first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_save_rate IS 'The holdout''s saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift IS 'save_rate minus held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift_upper IS 'Its 95% Newcombe interval, upper bound.';
