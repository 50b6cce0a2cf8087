-- Upgrade of schema version 31 to 32: renewal-date extensions granted by support (POST /v1/grants with kind
-- extension), sent once to Apple's Extend a Subscription Renewal Date on the call lanes, their outcome recorded.
-- reclaim-additive: yes
-- (Additive: a new table and a new index; version 31's binaries name neither. A version-31 worker that claims a
-- renewal_extension job has no handler for it: the job is retried, and runs on a version-32 worker.)
--
-- reclaim-schema-version: 32

CREATE TABLE reclaim.renewal_extensions (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    app_account_token       uuid,
    idempotency_key         text        NOT NULL,
    request_sha256          bytea,
    admin_key_id            uuid,
    reason                  text        NOT NULL,
    campaign                text        NOT NULL,
    extend_by_days          integer     NOT NULL CHECK (extend_by_days BETWEEN 1 AND 90),
    extend_reason_code      integer     NOT NULL CHECK (extend_reason_code BETWEEN 0 AND 3),
    status                  text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'extended', 'refused')),
    created_at              timestamptz NOT NULL DEFAULT now(),
    settled_at              timestamptz,
    effective_date          timestamptz,
    web_order_line_item_id  text,
    apple_status            integer,
    apple_error             text,
    UNIQUE (bundle_id, idempotency_key),
    CHECK (length(idempotency_key) BETWEEN 1 AND 128)
);
CREATE INDEX renewal_extensions_subscription_idx ON reclaim.renewal_extensions (bundle_id, environment, original_transaction_id, created_at);
COMMENT ON TABLE reclaim.renewal_extensions IS 'Make-goods: renewal-date extensions granted through POST /v1/grants (kind extension) and sent to Apple''s Extend a Subscription Renewal Date, one call per row, with Apple''s outcome.';
COMMENT ON COLUMN reclaim.renewal_extensions.id IS 'Grant id.';
COMMENT ON COLUMN reclaim.renewal_extensions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.renewal_extensions.environment IS 'The subscription''s environment, Sandbox or Production.';
COMMENT ON COLUMN reclaim.renewal_extensions.original_transaction_id IS 'The subscription extended (Apple''s originalTransactionId); a pseudonym once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.app_account_token IS 'The subscriber as the request named them, if by the app''s user id.';
COMMENT ON COLUMN reclaim.renewal_extensions.idempotency_key IS 'The request''s Idempotency-Key, unique per app, sent to Apple as requestIdentifier (at most 128 characters, Apple''s limit): a call sent again after a lost answer is the same request to Apple. forgotten:<id> once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.request_sha256 IS 'SHA-256 of the normalized request: the same Idempotency-Key with another request is refused (422 idempotency-key-reused). NULL once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.admin_key_id IS 'The admin key that made the grant.';
COMMENT ON COLUMN reclaim.renewal_extensions.reason IS 'Free text: why (e.g. the outage of 2026-11-20).';
COMMENT ON COLUMN reclaim.renewal_extensions.campaign IS 'Label for reporting (default make-good).';
COMMENT ON COLUMN reclaim.renewal_extensions.extend_by_days IS 'Apple''s extendByDays: 1 to 90.';
COMMENT ON COLUMN reclaim.renewal_extensions.extend_reason_code IS 'Apple''s extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.';
COMMENT ON COLUMN reclaim.renewal_extensions.status IS 'pending (not yet answered by Apple), extended (Apple answered success: effective_date), refused (Apple answered an error no retry cures, or refused the key for 24 hours: apple_error).';
COMMENT ON COLUMN reclaim.renewal_extensions.created_at IS 'When the grant was made.';
COMMENT ON COLUMN reclaim.renewal_extensions.settled_at IS 'When Apple''s answer was recorded.';
COMMENT ON COLUMN reclaim.renewal_extensions.effective_date IS 'Apple''s effectiveDate: the subscription''s new expiration date.';
COMMENT ON COLUMN reclaim.renewal_extensions.web_order_line_item_id IS 'Apple''s webOrderLineItemId of the extended period.';
COMMENT ON COLUMN reclaim.renewal_extensions.apple_status IS 'The HTTP status of Apple''s last answer.';
COMMENT ON COLUMN reclaim.renewal_extensions.apple_error IS 'Apple''s error, named (e.g. 4030005 SubscriptionMaxExtensionError), when refused; the last failed attempt''s while pending.';

-- The call lanes' claim of extensions, as jobs_call_claim_idx is refund answers'.
CREATE INDEX jobs_extension_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'renewal_extension';
