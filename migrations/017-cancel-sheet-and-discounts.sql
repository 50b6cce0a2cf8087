-- Upgrade of schema version 16 to 17: cancel-sheet campaigns (trigger RETENTION_MESSAGING) record each answer they give
-- Apple's Retention Messaging realtime request in reclaim.cancel_sheet_decisions, and any campaign can be switched off
-- at once without a restart (reclaim campaigns pause: reclaim.campaigns.paused_at); reclaim.offer_redemptions records
-- every discounted purchase with its offerType and offerPeriod (offer codes, win-back and App Store Connect retention
-- offers beside promotional ones), summed per channel by reclaim.discount_channels_daily.
-- reclaim-additive: yes
-- (Additive: new tables, a view and columns that are nullable or have a default; version 16's binaries neither read
-- nor write them, answer the cancel sheet as they did, and insert promotional redemptions, which take offer_type 2.)
--
-- reclaim-schema-version: 17

CREATE TABLE reclaim.cancel_sheet_decisions (
    id                      uuid        PRIMARY KEY,
    campaign_id             text        NOT NULL,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    request_identifier      text        NOT NULL,
    product_id              text        NOT NULL,
    outcome                 text        NOT NULL CHECK (outcome IN ('answered', 'held_out', 'held_back')),
    shadow                  boolean     NOT NULL,
    variant_id              text,
    answer                  text        NOT NULL CHECK (answer IN ('nothing', 'message', 'alternate_product', 'promotional_offer')),
    message_identifier      text,
    answer_product_id       text,
    offer_identifier        text,
    repeat_of               uuid        REFERENCES reclaim.cancel_sheet_decisions (id),
    reason                  text        NOT NULL,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    CHECK (outcome IN ('answered', 'held_back') OR (variant_id IS NULL AND answer = 'nothing'))
);
CREATE INDEX cancel_sheet_decisions_subscriber_idx ON reclaim.cancel_sheet_decisions (bundle_id, environment, original_transaction_id, decided_at) WHERE repeat_of IS NULL;
CREATE INDEX cancel_sheet_decisions_campaign_idx ON reclaim.cancel_sheet_decisions (campaign_id, decided_at);
COMMENT ON TABLE reclaim.cancel_sheet_decisions IS 'Every answer a cancel-sheet campaign (trigger RETENTION_MESSAGING) gave Apple''s Retention Messaging realtime request, or would have given (shadow): the campaign, the arm or the holdout, and the answer. A request within the campaign''s cooldown of an earlier decision repeats it (repeat_of); first decisions are the unit of the campaign''s statistics.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.id IS 'Decision id.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.campaign_id IS 'The cancel-sheet campaign (reclaim.campaigns.id).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.bundle_id IS 'The app (the configured one with the request''s appAppleId).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.environment IS 'Sandbox or Production, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.original_transaction_id IS 'The subscriber''s subscription, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.request_identifier IS 'Apple''s requestIdentifier (a UUID) of the realtime request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.product_id IS 'The subscription''s product when the subscriber opened the sheet, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.outcome IS 'answered (the arm''s answer), held_out (the control group: answered {}, so Apple''s own fallback ran) or held_back (the arm''s promotional offer would have exceeded the app''s discountBudget: answered {}; the answer columns say what was held back, reason says why).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.shadow IS 'The campaign was in shadow mode: the answer columns say what it would have answered; Apple was answered {}.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.variant_id IS 'The arm; NULL for held_out and for a campaign without variants.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.answer IS 'The key of Apple''s RealtimeResponseBody answered (or, for shadow, that would have been): message, alternate_product, promotional_offer; nothing for held_out.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.message_identifier IS 'The messageIdentifier answered; NULL for nothing.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.answer_product_id IS 'alternate_product: the product to switch to; promotional_offer: the offer''s product; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.offer_identifier IS 'promotional_offer: the offer identifier signed; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.repeat_of IS 'The first decision this request repeated (within the campaign''s cooldown); NULL for a first decision.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.reason IS 'Why, in words (e.g. "held out: bucket 312 of 10000 is in the 10% control group").';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.decided_at IS 'When the request was answered.';

ALTER TABLE reclaim.campaigns ADD COLUMN paused_at timestamptz;
ALTER TABLE reclaim.campaigns ADD COLUMN paused_reason text;
COMMENT ON COLUMN reclaim.campaigns.paused_at IS 'Set by reclaim campaigns pause: the campaign is switched off at once, on every server, until reclaim campaigns resume. NULL: running.';
COMMENT ON COLUMN reclaim.campaigns.paused_reason IS 'What reclaim campaigns pause --reason said; NULL when none was given.';
COMMENT ON COLUMN reclaim.campaigns.trigger IS 'TYPE or TYPE/SUBTYPE of the notification that makes a subscriber eligible, or RETENTION_MESSAGING: a cancel-sheet campaign, which answers Apple''s Retention Messaging realtime requests (reclaim.cancel_sheet_decisions).';

ALTER TABLE reclaim.offer_redemptions ADD COLUMN offer_type smallint NOT NULL DEFAULT 2;
ALTER TABLE reclaim.offer_redemptions ADD COLUMN offer_period text;
CREATE INDEX offer_redemptions_subscriber_idx ON reclaim.offer_redemptions (bundle_id, environment, original_transaction_id, redeemed_at);
COMMENT ON TABLE reclaim.offer_redemptions IS 'Every discounted purchase Apple reported (OFFER_REDEEMED, SUBSCRIBED or DID_RENEW whose transaction has an offerType other than 1, introductory), through every door: Reclaim''s promotional offers (offer_id set), promotional offers signed elsewhere, offer codes, Apple''s win-back offers, App Store Connect''s retention offers, and types Apple adds later. Rows before schema 17 are promotional offers only.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_identifier IS 'The offer identifier the transaction carries ('''' when Apple sent none).';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_type IS 'Apple''s offerType: 2 promotional, 3 offer code, 4 win-back, 5 App Store Connect retention offer (named at WWDC26; not in Apple''s offerType reference as read for this release), any other value as Apple sent it.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_period IS 'Apple''s offerPeriod (ISO 8601 duration, e.g. P1M) when the transaction carries one.';

CREATE VIEW reclaim.discount_channels_daily AS
SELECT r.bundle_id,
       r.environment,
       (date_trunc('day', r.redeemed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS day,
       CASE WHEN r.offer_id IS NOT NULL THEN 'reclaim'
            WHEN r.offer_type = 2 THEN 'promotional_elsewhere'
            WHEN r.offer_type = 3 THEN 'offer_code'
            WHEN r.offer_type = 4 THEN 'win_back'
            WHEN r.offer_type = 5 THEN 'retention_offer'
            ELSE 'other' END AS channel,
       count(*) AS redemptions,
       count(DISTINCT r.original_transaction_id) AS subscribers
FROM reclaim.offer_redemptions r
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.discount_channels_daily IS 'Discounted purchases per UTC day and channel, Reclaim''s apart from the doors Reclaim does not open: the other half of the funnel (campaign_funnel counts Reclaim''s offers only).';
COMMENT ON COLUMN reclaim.discount_channels_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.discount_channels_daily.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.discount_channels_daily.day IS 'The UTC day of redeemed_at.';
COMMENT ON COLUMN reclaim.discount_channels_daily.channel IS 'reclaim (an offer Reclaim issued), promotional_elsewhere (offerType 2 Reclaim did not issue), offer_code (3), win_back (4), retention_offer (5, App Store Connect''s cancel-sheet offers) or other (a type Apple added later).';
COMMENT ON COLUMN reclaim.discount_channels_daily.redemptions IS 'Discounted transactions (a pay-as-you-go offer''s renewals each count).';
COMMENT ON COLUMN reclaim.discount_channels_daily.subscribers IS 'Distinct subscriptions among them.';

ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN save_window interval NOT NULL DEFAULT interval '30 days';
ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN save_outcome text CHECK (save_outcome IN ('saved', 'lost', 'unknown'));
ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN saved_product_id text;
ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN settled_at timestamptz;
CREATE INDEX cancel_sheet_decisions_unsettled_idx ON reclaim.cancel_sheet_decisions (decided_at) WHERE settled_at IS NULL AND repeat_of IS NULL;
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.save_window IS 'The campaign''s saveWindow when it decided: the outcome is settled this long after decided_at.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.save_outcome IS 'First decisions, once settled at the window''s end: saved (the answered offer redeemed in the window, a renewal in the window, or auto-renew on at its end), lost (auto-renew off, or expired, revoked or refunded), unknown (Reclaim has no state of the subscription). NULL until settled, and for repeats.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.saved_product_id IS 'For saved with auto-renew on: the product it renews to (a switch-plan save counts the product moved to).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.settled_at IS 'When the worker settled save_outcome (at or soon after decided_at + save_window); final from then on.';

CREATE VIEW reclaim.cancel_sheet_save_rates AS
WITH firsts AS (
    SELECT d.bundle_id, d.environment, d.campaign_id, d.outcome, coalesce(d.variant_id, '') AS variant_id, d.save_outcome
    FROM reclaim.cancel_sheet_decisions d
    WHERE d.repeat_of IS NULL AND NOT d.shadow AND d.outcome IN ('answered', 'held_out')),
arms AS (
    SELECT bundle_id, environment, campaign_id, variant_id, count(*) FILTER (WHERE save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome IS NULL OR save_outcome = 'unknown') AS undecided
    FROM firsts WHERE outcome = 'answered' GROUP BY 1, 2, 3, 4),
held AS (
    SELECT bundle_id, environment, campaign_id, count(*) FILTER (WHERE save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome IS NULL OR save_outcome = 'unknown') AS undecided
    FROM firsts WHERE outcome = 'held_out' GROUP BY 1, 2, 3)
SELECT a.bundle_id, a.environment, a.campaign_id, a.variant_id, a.saved, a.lost, a.undecided,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       coalesce(h.saved, 0) AS held_out_saved, coalesce(h.lost, 0) AS held_out_lost, coalesce(h.undecided, 0) AS held_out_undecided,
       h.saved::float8 / nullif(h.saved + h.lost, 0) AS held_out_save_rate, o.lower AS held_out_save_rate_lower, o.upper AS held_out_save_rate_upper,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - h.saved::float8 / nullif(h.saved + h.lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper
FROM arms a
LEFT JOIN held h ON h.bundle_id = a.bundle_id AND h.environment = a.environment AND h.campaign_id = a.campaign_id
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.wilson_interval(coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS o
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS l;
COMMENT ON VIEW reclaim.cancel_sheet_save_rates IS 'Each cancel-sheet campaign''s arm against its holdout: first decisions settled as saved or lost at the end of the saveWindow, the save rate with a 95% Wilson interval, and the lift over the holdout with a 95% Newcombe interval. The holdout was answered {}, so the lift is over Apple''s own fallback (App Store Connect''s retention offers or its default message), not over showing nothing. Shadow and held-back decisions are left out.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.campaign_id IS 'The cancel-sheet campaign.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.variant_id IS 'The arm (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.saved IS 'First decisions of the arm settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lost IS 'First decisions of the arm settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.undecided IS 'First decisions whose window is still open, or whose subscription Reclaim does not know: not in the rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate IS 'saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_saved IS 'The campaign''s held-out first decisions settled as saved (the same on every arm''s row).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_lost IS 'Held-out first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_undecided IS 'Held-out first decisions not settled, or unknown.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate IS 'The holdout''s saved / (saved + lost): Apple''s fallback''s save rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift IS 'save_rate minus held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift_upper IS 'Its 95% Newcombe interval, upper bound.';
