-- Upgrade of schema version 3 to 4: API keys get an optional name, to tell them apart in
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- `reclaim apps list` and when revoking one.
--
-- reclaim-schema-version: 4

ALTER TABLE reclaim.api_keys ADD COLUMN name text;
COMMENT ON COLUMN reclaim.api_keys.name IS 'What the operator called the key when creating it (e.g. ios-production), to tell keys apart.';
