-- Upgrade of schema version 5 to 6: read-only console keys (scope console), of one app or of all.
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
--
-- reclaim-schema-version: 6

ALTER TABLE reclaim.api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE reclaim.api_keys DROP CONSTRAINT api_keys_check;
ALTER TABLE reclaim.api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('app', 'admin', 'console'));
ALTER TABLE reclaim.api_keys ADD CONSTRAINT api_keys_check CHECK (scope = 'console' OR (scope = 'app') = (bundle_id IS NOT NULL));
COMMENT ON TABLE reclaim.api_keys IS 'Keys for the delivery API (scope app, bound to one bundle id), the admin API and console (scope admin) and the read-only console (scope console, of one app or, without a bundle id, all). Only a SHA-256 of each key is stored.';
COMMENT ON COLUMN reclaim.api_keys.scope IS 'app (delivery API), admin (admin API and /console, every app) or console (/console only).';
COMMENT ON COLUMN reclaim.api_keys.bundle_id IS 'For app keys and app-bound console keys: the only app whose data the key can read. NULL for admin keys and global console keys.';
