-- Upgrade of schema version 36 to 37: the app's own cancel flow. POST /v1/cancel-flow records each cancel intent and
-- its campaign's answer (reclaim.cancel_flow_decisions); an offer answered there is the subscriber's live offer
-- (reclaim.offers.cancel_flow_decision_id); the app's steps go to reclaim.cancel_flow_events; the save rates are views
-- over Apple's notifications.
-- reclaim-additive: yes
-- (Additive: new tables, views and a nullable column; the offers check admits the new column as the third origin.
-- Version 36's binaries never write it.)
--
-- reclaim-schema-version: 37

CREATE TABLE reclaim.cancel_flow_decisions (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    survey_reason           text,
    can_show                text[]      NOT NULL,
    campaign_id             text,
    outcome                 text        NOT NULL CHECK (outcome IN ('answered', 'held_out', 'held_back', 'none')),
    variant_id              text,
    answer                  text        NOT NULL CHECK (answer IN ('nothing', 'offer', 'message', 'switch')),
    message                 text,
    answer_product_id       text,
    offer_identifier        text,
    repeat_of               uuid        REFERENCES reclaim.cancel_flow_decisions (id),
    follows                 uuid,
    reason                  text        NOT NULL,
    save_window             interval    NOT NULL,
    billing_plan_type       text,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    CHECK ((campaign_id IS NULL) = (outcome = 'none')),
    CHECK (outcome IN ('answered', 'held_back') OR answer = 'nothing')
);
CREATE INDEX cancel_flow_decisions_subscriber_idx ON reclaim.cancel_flow_decisions (bundle_id, environment, original_transaction_id, decided_at);
CREATE INDEX cancel_flow_decisions_campaign_idx ON reclaim.cancel_flow_decisions (campaign_id, decided_at);
CREATE UNIQUE INDEX cancel_flow_decisions_first_idx ON reclaim.cancel_flow_decisions (bundle_id, environment, original_transaction_id, campaign_id, follows)
    WHERE repeat_of IS NULL AND follows IS NOT NULL;
COMMENT ON TABLE reclaim.cancel_flow_decisions IS 'Every cancel intent the app sent (POST /v1/cancel-flow): the subscriber tapped "Cancel subscription" in the app and may have said why; the cancel-flow campaign (trigger CANCEL_FLOW) that decided, the arm or the holdout, and what the app was answered. A request within the campaign''s cooldown of an earlier decision repeats it (repeat_of); first decisions are the unit of the save rates (reclaim.cancel_flow_save_rates).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.id IS 'The flow''s id (flowId in the answer; the app records its steps with it in reclaim.cancel_flow_events).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.bundle_id IS 'The app (the app key''s).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.environment IS 'Sandbox or Production: the subscription''s.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.original_transaction_id IS 'The subscriber''s subscription (named by its appAccountToken or proven by a signed transaction).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.survey_reason IS 'The survey answer the subscriber chose (one of apps[].cancelReasons); NULL for no answer.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.can_show IS 'What the app said it can show: offer, message, switch.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.campaign_id IS 'The cancel-flow campaign that decided (reclaim.campaigns.id); NULL when none did (outcome none).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.outcome IS 'answered (the arm''s answer), held_out (the control group: nothing shown), held_back (the arm''s offer would have exceeded the app''s discountBudget: nothing shown; the answer columns say what was held back) or none (no campaign answered: reason says why).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.variant_id IS 'The arm; NULL for held_out, none and a campaign without variants.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.answer IS 'What the app was answered (held_back: would have been): offer (a promotional offer, then the subscriber''s live offer in reclaim.offers), message, switch, or nothing.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.message IS 'message: the key the app words its message by; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.answer_product_id IS 'switch: the product to move to; offer: the offer''s product; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.offer_identifier IS 'offer: the promotional offer identifier signed; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.repeat_of IS 'The first decision this request repeated (within the campaign''s cooldown); NULL for a first decision.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.follows IS 'For a first decision: the campaign''s previous first decision for the subscriber (00000000-0000-0000-0000-000000000001 when none); unique with the subscriber and campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.reason IS 'Why, in words (e.g. "held out: bucket 312 of 10000 is in the 10% control group", or why no campaign answered).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.save_window IS 'The campaign''s saveWindow when it decided: saved unless auto-renew was turned off or a refund followed within it.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.billing_plan_type IS 'The subscription''s billingPlanType (MONTHLY, BILLED_UPFRONT) when it decided; NULL when unknown.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.decided_at IS 'When the app was answered.';

CREATE TABLE reclaim.cancel_flow_events (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    flow_id     uuid        REFERENCES reclaim.cancel_flow_decisions (id) ON DELETE CASCADE,
    bundle_id   text        NOT NULL,
    step        text        NOT NULL CHECK (step IN ('survey_skipped', 'answer_shown', 'accepted', 'declined', 'purchased', 'purchase_pending',
                                                     'purchase_failed', 'manage_opened', 'refund_opened', 'fallback_opened')),
    error       text        CHECK (char_length(error) <= 500),
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cancel_flow_events_flow_idx ON reclaim.cancel_flow_events (flow_id, at);
CREATE INDEX cancel_flow_events_step_idx ON reclaim.cancel_flow_events (bundle_id, step, at);
COMMENT ON TABLE reclaim.cancel_flow_events IS 'The steps of the app''s cancel flows as ReclaimClient records them (POST /v1/cancel-flow/events): what was shown, accepted or declined, and which of Apple''s sheets opened. The funnel only: the save rates come from Apple''s notifications.';
COMMENT ON COLUMN reclaim.cancel_flow_events.id IS 'Event id.';
COMMENT ON COLUMN reclaim.cancel_flow_events.flow_id IS 'The flow (reclaim.cancel_flow_decisions.id); NULL for survey_skipped before a flow started.';
COMMENT ON COLUMN reclaim.cancel_flow_events.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_events.step IS 'survey_skipped, answer_shown, accepted, declined, purchased, purchase_pending, purchase_failed, manage_opened (Apple''s manage-subscriptions sheet), refund_opened (Apple''s refund request sheet), fallback_opened (where Apple declares no such sheet: the subscriptions page).';
COMMENT ON COLUMN reclaim.cancel_flow_events.error IS 'purchase_failed: the error, as the app described it; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_events.at IS 'When Reclaim received it.';

ALTER TABLE reclaim.offers ADD COLUMN cancel_flow_decision_id uuid REFERENCES reclaim.cancel_flow_decisions (id);
ALTER TABLE reclaim.offers DROP CONSTRAINT offers_check;
ALTER TABLE reclaim.offers ADD CONSTRAINT offers_check CHECK (decision_id IS NOT NULL OR grant_id IS NOT NULL OR cancel_flow_decision_id IS NOT NULL);
COMMENT ON COLUMN reclaim.offers.cancel_flow_decision_id IS 'The cancel-flow decision that issued it (an offer answered to the app''s cancel flow); NULL for a campaign''s or a grant''s.';

CREATE VIEW reclaim.cancel_flow_outcomes AS
SELECT d.id, d.bundle_id, d.environment, d.original_transaction_id, d.campaign_id, coalesce(d.variant_id, '') AS variant_id, d.outcome,
       coalesce(d.survey_reason, 'none') AS survey_reason, d.decided_at, d.decided_at + d.save_window AS settles_at,
       CASE WHEN l.at IS NOT NULL THEN 'lost' WHEN now() >= d.decided_at + d.save_window THEN 'saved' ELSE 'open' END AS save_outcome,
       l.at AS lost_at, l.notification AS lost_by
FROM reclaim.cancel_flow_decisions d
-- Lost: Apple's notification that auto-renew went off, or of a refund, within the window (a CONSUMPTION_REQUEST is a
-- request Apple may decline, and a granted one sends REFUND). Reclaim received it after the flow, or Apple signed it
-- after: news after the flow.
LEFT JOIN LATERAL (
    SELECT n.signed_date AS at, n.notification_type || coalesce('/' || n.subtype, '') AS notification
    FROM reclaim.notifications n
    WHERE n.bundle_id = d.bundle_id AND n.environment = d.environment AND n.original_transaction_id = d.original_transaction_id
      AND n.source = 'apple'
      AND (n.signed_date >= d.decided_at OR n.received_at >= d.decided_at) AND n.signed_date < d.decided_at + d.save_window
      AND ((n.notification_type = 'DID_CHANGE_RENEWAL_STATUS' AND n.subtype = 'AUTO_RENEW_DISABLED') OR n.notification_type = 'REFUND')
    ORDER BY n.signed_date
    LIMIT 1
) l ON true
WHERE d.repeat_of IS NULL AND d.outcome IN ('answered', 'held_out');
COMMENT ON VIEW reclaim.cancel_flow_outcomes IS 'Each first cancel-flow decision that answered or held out, with its save outcome from Apple''s notifications: lost when auto-renew was turned off (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED) or a refund was granted (REFUND) within the save window, saved when the window ended without either, open until then. A CONSUMPTION_REQUEST alone does not count: Apple may decline it.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.id IS 'The decision (reclaim.cancel_flow_decisions.id).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.original_transaction_id IS 'The subscription.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.campaign_id IS 'The cancel-flow campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.variant_id IS 'The arm (empty for the holdout and a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.outcome IS 'answered or held_out.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.survey_reason IS 'The survey answer; none for no answer.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.decided_at IS 'When the app was answered.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.settles_at IS 'The end of the save window.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.save_outcome IS 'lost, saved, or open (the window runs and nothing was lost yet).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.lost_at IS 'lost: when Apple signed the notification that lost it.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.lost_by IS 'lost: that notification, TYPE/SUBTYPE.';

CREATE VIEW reclaim.cancel_flow_save_rates AS
WITH arms AS (
    SELECT bundle_id, environment, campaign_id, variant_id,
           CASE WHEN grouping(survey_reason) = 1 THEN '*' ELSE survey_reason END AS survey_reason,
           count(*) FILTER (WHERE save_outcome = 'saved') AS saved, count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome = 'open') AS open
    FROM reclaim.cancel_flow_outcomes WHERE outcome = 'answered'
    GROUP BY GROUPING SETS ((bundle_id, environment, campaign_id, variant_id, survey_reason), (bundle_id, environment, campaign_id, variant_id))
), held AS (
    SELECT bundle_id, environment, campaign_id, CASE WHEN grouping(survey_reason) = 1 THEN '*' ELSE survey_reason END AS survey_reason,
           count(*) FILTER (WHERE save_outcome = 'saved') AS saved, count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome = 'open') AS open
    FROM reclaim.cancel_flow_outcomes WHERE outcome = 'held_out'
    GROUP BY GROUPING SETS ((bundle_id, environment, campaign_id, survey_reason), (bundle_id, environment, campaign_id))
)
SELECT a.bundle_id, a.environment, a.campaign_id, a.variant_id, a.survey_reason, a.saved, a.lost, a.open,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       (a.saved + a.open)::float8 / nullif(a.saved + a.lost + a.open, 0) AS kept_rate, k.lower AS kept_rate_lower, k.upper AS kept_rate_upper,
       coalesce(h.saved, 0) AS held_out_saved, coalesce(h.lost, 0) AS held_out_lost, coalesce(h.open, 0) AS held_out_open,
       h.saved::float8 / nullif(h.saved + h.lost, 0) AS held_out_save_rate,
       (h.saved + h.open)::float8 / nullif(h.saved + h.lost + h.open, 0) AS held_out_kept_rate, o.lower AS held_out_kept_rate_lower,
       o.upper AS held_out_kept_rate_upper,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - h.saved::float8 / nullif(h.saved + h.lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper,
       (a.saved + a.open)::float8 / nullif(a.saved + a.lost + a.open, 0) - (h.saved + h.open)::float8 / nullif(h.saved + h.lost + h.open, 0) AS kept_lift,
       kl.lower AS kept_lift_lower, kl.upper AS kept_lift_upper
FROM arms a
LEFT JOIN held h USING (bundle_id, environment, campaign_id, survey_reason)
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved + a.open, a.saved + a.lost + a.open) AS k
CROSS JOIN LATERAL reclaim.wilson_interval(coalesce(h.saved + h.open, 0), coalesce(h.saved + h.lost + h.open, 0)) AS o
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS l
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved + a.open, a.saved + a.lost + a.open, coalesce(h.saved + h.open, 0),
                                             coalesce(h.saved + h.lost + h.open, 0)) AS kl;
COMMENT ON VIEW reclaim.cancel_flow_save_rates IS 'Each cancel-flow campaign''s arm against its holdout, per survey answer and for all answers (survey_reason *): first decisions saved, lost or still open (reclaim.cancel_flow_outcomes); the settled save rate with its 95% Wilson interval and its lift over the holdout with a 95% Newcombe interval, and the same for the kept rate (not lost so far: saved or open), which reads before the windows end. The holdout was shown nothing and went on to Apple''s sheet.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.campaign_id IS 'The cancel-flow campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.variant_id IS 'The arm (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.survey_reason IS 'The survey answer (none for no answer), or * for every answer.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.saved IS 'First decisions of the arm whose window ended without a loss.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lost IS 'First decisions of the arm lost: auto-renew turned off, or refunded, within the window.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.open IS 'First decisions of the arm whose window runs, nothing lost yet.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate IS 'saved / (saved + lost): settled decisions only.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate IS '(saved + open) / (saved + lost + open): not lost so far.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_saved IS 'The campaign''s held-out first decisions (of this survey answer) saved.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_lost IS 'Held-out first decisions lost.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_open IS 'Held-out first decisions still open.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_save_rate IS 'The holdout''s saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate IS 'The holdout''s (saved + open) / all.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift IS 'save_rate - held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift_upper IS 'Its 95% Newcombe interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift IS 'kept_rate - held_out_kept_rate.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift_upper IS 'Its 95% Newcombe interval, upper bound.';
