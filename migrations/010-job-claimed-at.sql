-- Upgrade of schema version 9 to 10: when a running job was claimed (jobs.claimed_at), so that a job left
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- `running` (its worker alive but its handler gone) shows as the age of the oldest running job, a metric with an
-- alert (reclaim_jobs_oldest_running_age_seconds, ReclaimJobStuck).
--
-- reclaim-schema-version: 10

ALTER TABLE reclaim.jobs ADD COLUMN claimed_at timestamptz;
COMMENT ON COLUMN reclaim.jobs.claimed_at IS 'When the current or last attempt was claimed by a worker. A job running much longer than worker.lease is stuck (reclaim_jobs_oldest_running_age_seconds). NULL: never claimed, or claimed before schema 10.';
