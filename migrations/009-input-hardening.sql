-- Upgrade of schema version 8 to 9: console sign-out ends the session (api_keys.console_sessions_not_before),
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- and a reused Idempotency-Key is compared on the whole normalized grant request (grants.request_sha256).
--
-- reclaim-schema-version: 9

ALTER TABLE reclaim.api_keys ADD COLUMN console_sessions_not_before timestamptz;
COMMENT ON COLUMN reclaim.api_keys.console_sessions_not_before IS '/console sessions of this key signed in before this time are ended: signing out moves it past the session that signed out, so a copied cookie stops working. NULL: no sign-out yet.';

ALTER TABLE reclaim.grants ADD COLUMN request_sha256 bytea;
COMMENT ON COLUMN reclaim.grants.request_sha256 IS 'SHA-256 of the normalized request (every field, defaults applied): the same Idempotency-Key with any other request is refused (422 idempotency-key-reused). NULL for grants made before schema 9, which are compared on their stored fields.';
