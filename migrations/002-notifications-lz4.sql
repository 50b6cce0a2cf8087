-- Upgrade of schema version 1 to 2: compress signed payloads with lz4.
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
--
-- A signed payload is 10-15 KB of base64url text. PostgreSQL's default TOAST compression, pglz,
-- took a fifth of all CPU time of the ingest path (scripts/bench ingest, perf); lz4 does the same
-- job at a small fraction of the CPU. Rows already stored keep their pglz compression. A server
-- built without lz4 support keeps pglz: the schema is the same either way.
--
-- reclaim-schema-version: 2

-- SET COMPRESSION takes an ACCESS EXCLUSIVE lock on reclaim.notifications: give up after a few
-- seconds rather than queue every ingest insert behind a long-running transaction (then run
-- `reclaim migrate` again). SET LOCAL ends with the migration's transaction.
SET LOCAL lock_timeout = '3s';

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE reclaim.notifications ALTER COLUMN signed_payload SET COMPRESSION lz4;
    END IF;
END
$$;
