-- Upgrade of schema version 34 to 35: least privilege. Keys take two more roles (support: one subscriber's story and
-- the reports; privacy: the story and the erasure), and every privileged action is recorded in a hash-chained audit
-- log whose subscriber targets are pseudonymised from the start.
-- reclaim-additive: yes
-- (Additive: the scopes a key may have widen and two tables are new; version 34's binaries create neither role,
-- refuse such a key as unknown, and write no audit rows.)
--
-- reclaim-schema-version: 35

ALTER TABLE reclaim.api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE reclaim.api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('app', 'admin', 'console', 'support', 'privacy'));
ALTER TABLE reclaim.api_keys DROP CONSTRAINT api_keys_check;
ALTER TABLE reclaim.api_keys ADD CONSTRAINT api_keys_check CHECK (scope IN ('console', 'support', 'privacy') OR (scope = 'app') = (bundle_id IS NOT NULL));
COMMENT ON TABLE reclaim.api_keys IS 'Keys for the delivery API (scope app, bound to one bundle id), the admin API and console (scope admin), the read-only console (scope console), support (one subscriber''s story and the reports) and privacy (the story and the erasure); console, support and privacy keys are of one app or, without a bundle id, all. Only a SHA-256 of each key is stored.';
COMMENT ON COLUMN reclaim.api_keys.scope IS 'The key''s role: app (delivery API), admin (admin API and /console, every app), console (/console''s counts only), support (/console and one subscriber''s story), privacy (the story and the erasure).';
COMMENT ON COLUMN reclaim.api_keys.bundle_id IS 'For app keys, and console, support and privacy keys of one app: the only app whose data the key can read. NULL for admin keys and for console, support and privacy keys of every app.';

CREATE TABLE reclaim.audit_log (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            timestamptz NOT NULL,
    actor_kind    text        NOT NULL CHECK (actor_kind IN ('key', 'command', 'process')),
    actor_key_id  uuid,
    actor         text        NOT NULL,
    action        text        NOT NULL,
    target        text,
    outcome       text        NOT NULL,
    detail        text,
    previous_hash bytea       NOT NULL CHECK (octet_length(previous_hash) = 32),
    hash          bytea       NOT NULL UNIQUE CHECK (octet_length(hash) = 32)
);
CREATE INDEX audit_log_at_idx ON reclaim.audit_log (at);
CREATE INDEX audit_log_target_idx ON reclaim.audit_log (target) WHERE target IS NOT NULL;
COMMENT ON TABLE reclaim.audit_log IS 'Every privileged action, appended and never changed: who (a key, or a command line''s actor), what, on what, with what outcome. Each row''s hash covers the row and the previous row''s hash, so an edit or a deletion breaks the chain (reclaim audit --verify). Subscriber targets are pseudonymised when written, so reclaim subscribers forget has nothing to redact here.';
COMMENT ON COLUMN reclaim.audit_log.id IS 'The row''s position in the chain.';
COMMENT ON COLUMN reclaim.audit_log.at IS 'When the action was recorded (whole milliseconds: the hash covers them).';
COMMENT ON COLUMN reclaim.audit_log.actor_kind IS 'key (an HTTP request or a console session: actor_key_id), command (a reclaim command line: --actor, RECLAIM_ACTOR or the operating-system user) or process (reclaim serve starting).';
COMMENT ON COLUMN reclaim.audit_log.actor_key_id IS 'The key that acted (reclaim.api_keys.id); NULL for a command line, a process, or a sign-in with an unknown key.';
COMMENT ON COLUMN reclaim.audit_log.actor IS 'The key''s role and name (admin:ops-alice), the command line''s actor, or the process''s host and pid.';
COMMENT ON COLUMN reclaim.audit_log.action IS 'What was done: grant.create, campaign.pause, subscriber.read, subscriber.forget, key.create, console.sign-in, process.start, … (docs/operations.md lists them).';
COMMENT ON COLUMN reclaim.audit_log.target IS 'What it was done to: a campaign (campaign:<id>), a key (key:<id>), an app (app:<bundle id>), or a subscriber as a keyed hash (subscriber:<HMAC-SHA-256 prefix>), never the id itself.';
COMMENT ON COLUMN reclaim.audit_log.outcome IS 'ok, refused (the role may not, or the request was invalid), failed, or for a dry run dry-run.';
COMMENT ON COLUMN reclaim.audit_log.detail IS 'A short note: the reason given, the config''s SHA-256 for process.start, the count a command affected. Never a subscriber''s identifier or a key.';
COMMENT ON COLUMN reclaim.audit_log.previous_hash IS 'The hash of the row before (32 zero bytes for the first).';
COMMENT ON COLUMN reclaim.audit_log.hash IS 'SHA-256 over previous_hash and this row''s fields, each length-prefixed (AuditLog.rowHash).';

CREATE TABLE reclaim.audit_pseudonym_key (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    secret     bytea       NOT NULL CHECK (octet_length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE reclaim.audit_pseudonym_key IS 'The one secret the audit log''s subscriber targets are keyed with (HMAC-SHA-256), made by Reclaim on first use: reclaim audit --target finds a subscriber''s rows by computing it again; without the secret a pseudonym names nobody.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.id IS 'Always true: one row.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.secret IS '32 random bytes.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.created_at IS 'When it was made.';
