-- Upgrade of schema version 24 to 25: reclaim subscribers forget records each erasure without the subscriber's
-- identifiers, and keeps one-way hashes of them so that a later notification does not bring the subscriber back.
-- reclaim-additive: yes
-- (Additive: two new tables and two functions; version 24's binaries neither read nor write them.)
--
-- reclaim-schema-version: 25

CREATE TABLE reclaim.erasures (
    id            uuid        PRIMARY KEY,
    bundle_id     text,
    erased_at     timestamptz NOT NULL DEFAULT now(),
    subscriptions integer     NOT NULL,
    rows          jsonb       NOT NULL
);
COMMENT ON TABLE reclaim.erasures IS 'Every reclaim subscribers forget that found something to erase, without the subscriber''s identifiers: when, in which app, and how many rows of each table were redacted or deleted.';
COMMENT ON COLUMN reclaim.erasures.id IS 'The erasure; also the pseudonym (forgotten:<id>) its redacted rows carry in place of the original transaction id, which ties them to each other and to no one.';
COMMENT ON COLUMN reclaim.erasures.bundle_id IS 'The app the erasure was limited to (--app); NULL: every app.';
COMMENT ON COLUMN reclaim.erasures.erased_at IS 'When the erasure committed.';
COMMENT ON COLUMN reclaim.erasures.subscriptions IS 'Subscriptions found and redacted.';
COMMENT ON COLUMN reclaim.erasures.rows IS 'Per table, the rows redacted or deleted, e.g. {"notifications": 12, "jobs": 14}.';

CREATE TABLE reclaim.forgotten_subscribers (
    kind       text        NOT NULL CHECK (kind IN ('original_transaction_id', 'app_account_token')),
    sha256     bytea       NOT NULL,
    bundle_id  text        NOT NULL,
    erasure_id uuid        NOT NULL REFERENCES reclaim.erasures (id),
    PRIMARY KEY (kind, sha256, bundle_id)
);
COMMENT ON TABLE reclaim.forgotten_subscribers IS 'One-way hashes of the identifiers of forgotten subscribers (reclaim.forgotten_hash): a notification, a backfilled status or a grant for one is dropped (its stored copy redacted) instead of bringing the subscriber back, so no campaign contacts them again.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.kind IS 'original_transaction_id or app_account_token.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.sha256 IS 'reclaim.forgotten_hash(kind, the identifier): anyone who already knows an identifier can tell whether it was forgotten; the identifiers cannot be listed from it without guessing them.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.bundle_id IS 'The app whose notifications are dropped; '''' (empty): every app (forgotten without --app).';
COMMENT ON COLUMN reclaim.forgotten_subscribers.erasure_id IS 'The erasure that recorded it.';

CREATE FUNCTION reclaim.forgotten_hash(kind text, identifier text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sha256(convert_to('reclaim forgotten ' || kind || ' ' || lower(identifier), 'UTF8'));
COMMENT ON FUNCTION reclaim.forgotten_hash(text, text) IS 'SHA-256 of a forgotten subscriber''s identifier (tokens in lowercase), as reclaim.forgotten_subscribers keeps it.';

CREATE FUNCTION reclaim.is_forgotten(bundle text, original_transaction_id text, app_account_token uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN EXISTS (
        SELECT 1 FROM reclaim.forgotten_subscribers f
        WHERE f.bundle_id IN ('', bundle)
          AND ((f.kind = 'original_transaction_id' AND f.sha256 = reclaim.forgotten_hash('original_transaction_id', original_transaction_id))
            OR (f.kind = 'app_account_token' AND f.sha256 = reclaim.forgotten_hash('app_account_token', app_account_token::text))));
COMMENT ON FUNCTION reclaim.is_forgotten(text, text, uuid) IS 'Whether a subscriber of the app, by either identifier (NULL: not known), was forgotten (reclaim subscribers forget).';
