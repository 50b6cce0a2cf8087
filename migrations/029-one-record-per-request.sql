-- Upgrade of schema version 28 to 29: one cancel-sheet record per Retention Messaging request. A request and its
-- replay (Apple's retry, or the same body sent twice) arriving together were both decided as repeats of the
-- subscriber's earlier decision, and both recorded (repeats are outside cancel_sheet_decisions_first_idx). With this
-- index the second insert does nothing (RecordStatement's ON CONFLICT DO NOTHING), and its request is answered from the
-- record of the first, as a later replay is.
-- reclaim-additive: yes
-- (Additive: an index. Version 28's binaries already insert with ON CONFLICT DO NOTHING and read the record again
-- when theirs was not inserted. Records made twice before this version keep both rows, so that no report changes:
-- the later one's request identifier is suffixed with ' (replayed, record <id>)'.)
--
-- reclaim-schema-version: 29

UPDATE reclaim.cancel_sheet_decisions d
SET request_identifier = d.request_identifier || ' (replayed, record ' || d.id || ')'
WHERE EXISTS (
    SELECT 1 FROM reclaim.cancel_sheet_decisions e
    WHERE e.request_identifier = d.request_identifier AND e.bundle_id = d.bundle_id AND e.environment = d.environment
      AND e.original_transaction_id = d.original_transaction_id AND (e.decided_at, e.id) < (d.decided_at, d.id)
);
CREATE UNIQUE INDEX cancel_sheet_decisions_one_per_request_idx
    ON reclaim.cancel_sheet_decisions (request_identifier, bundle_id, environment, original_transaction_id);
