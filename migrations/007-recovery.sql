-- Upgrade of schema version 6 to 7: reconciliation runs and backfill progress (App Store Server API).
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
--
-- reclaim-schema-version: 7

CREATE TABLE reclaim.reconciliation_runs (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bundle_id      text        NOT NULL,
    environment    text        NOT NULL,
    started_by     text        NOT NULL CHECK (started_by IN ('command', 'worker')),
    window_start   timestamptz NOT NULL,
    window_end     timestamptz NOT NULL,
    only_failures  boolean     NOT NULL,
    started_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz,
    pages          integer     NOT NULL DEFAULT 0,
    found          integer     NOT NULL DEFAULT 0,
    new            integer     NOT NULL DEFAULT 0,
    refused        integer     NOT NULL DEFAULT 0,
    error          text
);
CREATE INDEX reconciliation_runs_started_idx ON reclaim.reconciliation_runs (started_at);
COMMENT ON TABLE reclaim.reconciliation_runs IS 'Every reconciliation against Apple''s notification history (reclaim reconcile, or the worker''s periodic run): the window asked for and what came of it. A run with new > 0 found notifications that never reached Reclaim.';
COMMENT ON COLUMN reclaim.reconciliation_runs.id IS 'Run id.';
COMMENT ON COLUMN reclaim.reconciliation_runs.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.reconciliation_runs.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.reconciliation_runs.started_by IS 'command (reclaim reconcile) or worker (periodic).';
COMMENT ON COLUMN reclaim.reconciliation_runs.window_start IS 'Start of the history window asked for (clamped to what Apple keeps: 180 days in Production, 30 in Sandbox).';
COMMENT ON COLUMN reclaim.reconciliation_runs.window_end IS 'End of the window.';
COMMENT ON COLUMN reclaim.reconciliation_runs.only_failures IS 'Whether only notifications Apple failed to deliver were asked for.';
COMMENT ON COLUMN reclaim.reconciliation_runs.started_at IS 'When the run started.';
COMMENT ON COLUMN reclaim.reconciliation_runs.finished_at IS 'When it ended; NULL while running, or when its process died.';
COMMENT ON COLUMN reclaim.reconciliation_runs.pages IS 'History pages read (20 notifications a page).';
COMMENT ON COLUMN reclaim.reconciliation_runs.found IS 'Notifications in the history.';
COMMENT ON COLUMN reclaim.reconciliation_runs.new IS 'Of those, how many Reclaim had not stored: now stored and queued like any other.';
COMMENT ON COLUMN reclaim.reconciliation_runs.refused IS 'Of those, how many ingest refused (e.g. an environment the app does not accept); see reclaim.rejected_inputs.';
COMMENT ON COLUMN reclaim.reconciliation_runs.error IS 'Why the run stopped early, if it did.';

CREATE TABLE reclaim.backfill_transactions (
    bundle_id       text        NOT NULL,
    transaction_id  text        NOT NULL,
    environment     text,
    subscriptions   integer     NOT NULL,
    result          text        NOT NULL,
    done_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, transaction_id)
);
COMMENT ON TABLE reclaim.backfill_transactions IS 'Transaction ids reclaim backfill has handled, so an interrupted backfill resumes where it stopped.';
COMMENT ON COLUMN reclaim.backfill_transactions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.backfill_transactions.transaction_id IS 'A transaction id from the backfill file.';
COMMENT ON COLUMN reclaim.backfill_transactions.environment IS 'Where Apple knew it (Production or Sandbox); NULL when in neither.';
COMMENT ON COLUMN reclaim.backfill_transactions.subscriptions IS 'Subscriptions whose state it seeded.';
COMMENT ON COLUMN reclaim.backfill_transactions.result IS 'seeded, or why not (e.g. not found).';
COMMENT ON COLUMN reclaim.backfill_transactions.done_at IS 'When it was handled.';
