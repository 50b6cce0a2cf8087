-- Upgrade of schema version 33 to 34: an import asks Apple once. Apple's answer for each backfilled id is kept, so
-- that `reclaim backfill --evaluate` (and its --dry-run preview) decides from the imported state without asking
-- Apple again; each id records when the campaigns decided for it.
-- reclaim-additive: yes
-- (Additive: a new table and a nullable column; version 33's binaries name neither, and go on asking Apple.)
--
-- reclaim-schema-version: 34

ALTER TABLE reclaim.backfill_transactions ADD COLUMN evaluated_at timestamptz;
COMMENT ON COLUMN reclaim.backfill_transactions.evaluated_at IS 'When the campaigns decided for its subscriptions (reclaim backfill --evaluate); NULL: imported only (or before schema 34).';

CREATE TABLE reclaim.backfill_answers (
    bundle_id                text        NOT NULL,
    transaction_id           text        NOT NULL,
    environment              text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    status                   integer,
    signed_transaction_info  text        NOT NULL,
    signed_renewal_info      text,
    imported_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, transaction_id, original_transaction_id)
);
COMMENT ON TABLE reclaim.backfill_answers IS 'Apple''s answer to Get All Subscription Statuses for each backfilled id, one row per subscription: what reclaim backfill --evaluate decides from without asking Apple again (--refresh asks again and replaces it).';
COMMENT ON COLUMN reclaim.backfill_answers.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.backfill_answers.transaction_id IS 'The id from the backfill file (reclaim.backfill_transactions).';
COMMENT ON COLUMN reclaim.backfill_answers.environment IS 'Where Apple knew it (Production or Sandbox).';
COMMENT ON COLUMN reclaim.backfill_answers.original_transaction_id IS 'One subscription of the answer.';
COMMENT ON COLUMN reclaim.backfill_answers.status IS 'Apple''s status then (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).';
COMMENT ON COLUMN reclaim.backfill_answers.signed_transaction_info IS 'Apple''s signed transaction (JWS), verified again before it is used.';
COMMENT ON COLUMN reclaim.backfill_answers.signed_renewal_info IS 'Apple''s signed renewal info (JWS), verified again before it is used.';
COMMENT ON COLUMN reclaim.backfill_answers.imported_at IS 'When Apple answered.';
