-- Upgrade of schema version 16 to 17: cancel-sheet campaigns (trigger RETENTION_MESSAGING) record each answer they give
-- Apple's Retention Messaging realtime request in reclaim.cancel_sheet_decisions, and any campaign can be switched off
-- at once without a restart (reclaim campaigns pause: reclaim.campaigns.paused_at).
-- reclaim-additive: yes
-- (Additive: a new table and two nullable columns; version 16's binaries neither read nor write them, and answer the
-- cancel sheet as they did.)
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
    outcome                 text        NOT NULL CHECK (outcome IN ('answered', 'held_out')),
    shadow                  boolean     NOT NULL,
    variant_id              text,
    answer                  text        NOT NULL CHECK (answer IN ('nothing', 'message', 'alternate_product', 'promotional_offer')),
    message_identifier      text,
    answer_product_id       text,
    offer_identifier        text,
    repeat_of               uuid        REFERENCES reclaim.cancel_sheet_decisions (id),
    reason                  text        NOT NULL,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    CHECK (outcome = 'answered' OR (variant_id IS NULL AND answer = 'nothing'))
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
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.outcome IS 'answered (the arm''s answer) or held_out (the control group: answered {}, so Apple''s own fallback ran).';
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
