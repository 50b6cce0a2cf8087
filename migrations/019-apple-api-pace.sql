-- Upgrade of schema version 18 to 19: the App Store Server API's rate budget, shared by every Reclaim process, and
-- backfill failures recorded with their reason.
-- reclaim-additive: yes
-- (Additive: a new table and a nullable column; version 18's binaries neither read nor write them.)
--
-- reclaim-schema-version: 19

CREATE TABLE reclaim.apple_api_pace (
    bundle_id     text        NOT NULL,
    environment   text        NOT NULL,
    endpoint      text        NOT NULL,
    next_slot     timestamptz NOT NULL,
    paused_until  timestamptz,
    PRIMARY KEY (bundle_id, environment, endpoint)
);
COMMENT ON TABLE reclaim.apple_api_pace IS 'The App Store Server API rate budget every Reclaim process shares: per app, environment and endpoint, the next free request slot (slots are 1/rate apart, so all processes together send at most the rate in any second) and a pause that a 429 sets until its Retry-After. Rows are small and updated in place; reclaim reads nothing else from them.';
COMMENT ON COLUMN reclaim.apple_api_pace.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.apple_api_pace.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.apple_api_pace.endpoint IS 'The endpoint''s identifier, e.g. getAllSubscriptionStatuses (docs/configuration.md lists them).';
COMMENT ON COLUMN reclaim.apple_api_pace.next_slot IS 'When the next request may start: a process reserves a run of slots by moving it on.';
COMMENT ON COLUMN reclaim.apple_api_pace.paused_until IS 'Set from a 429''s Retry-After: no slot before it.';

ALTER TABLE reclaim.backfill_transactions ADD COLUMN reason text;
COMMENT ON COLUMN reclaim.backfill_transactions.result IS 'seeded; not found (in no environment asked); invalid (not a transaction id: never sent to Apple); failed (reason says why; a later run tries it again).';
COMMENT ON COLUMN reclaim.backfill_transactions.reason IS 'Why an id was invalid or failed (verification, Apple''s error); NULL otherwise.';
