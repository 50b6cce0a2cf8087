-- Upgrade of schema version 17 to 18: one first cancel-sheet decision per subscriber and campaign, whatever the
-- concurrency, and a record true to the answer that left. Each first decision names the campaign's previous first
-- decision for the subscriber (follows; 00000000-0000-0000-0000-000000000001 for the first of all), and a unique index over them lets one of
-- several concurrent requests that decided after the same decision be recorded: the others read it and repeat it.
-- A decision recorded whose answer did not leave within server.retentionBudgetMilliseconds is marked too_late (Apple
-- got {}); the statistics count it in no arm, and the subscriber's next request decides anew.
-- reclaim-additive: yes
-- (Additive: a nullable column, a wider check and a unique index over rows with follows set; version 17's binaries
-- insert follows NULL, which the index leaves out, and answer as they did.)
--
-- reclaim-schema-version: 18

ALTER TABLE reclaim.cancel_sheet_decisions ADD COLUMN follows uuid;
-- The first decisions recorded so far, chained in the order they were made (duplicates from concurrent requests
-- included: each follows the one before it, so the index holds them all).
UPDATE reclaim.cancel_sheet_decisions d
SET follows = c.follows
FROM (SELECT id, coalesce(lag(id) OVER (PARTITION BY bundle_id, environment, original_transaction_id, campaign_id ORDER BY decided_at, id),
                          '00000000-0000-0000-0000-000000000001') AS follows
      FROM reclaim.cancel_sheet_decisions WHERE repeat_of IS NULL) c
WHERE d.id = c.id;
CREATE UNIQUE INDEX cancel_sheet_decisions_first_idx ON reclaim.cancel_sheet_decisions (bundle_id, environment, original_transaction_id, campaign_id, follows) WHERE repeat_of IS NULL AND follows IS NOT NULL;
ALTER TABLE reclaim.cancel_sheet_decisions DROP CONSTRAINT cancel_sheet_decisions_outcome_check;
ALTER TABLE reclaim.cancel_sheet_decisions ADD CONSTRAINT cancel_sheet_decisions_outcome_check
    CHECK (outcome IN ('answered', 'held_out', 'held_back', 'too_late'));
ALTER TABLE reclaim.cancel_sheet_decisions DROP CONSTRAINT cancel_sheet_decisions_check;
ALTER TABLE reclaim.cancel_sheet_decisions ADD CONSTRAINT cancel_sheet_decisions_check
    CHECK (outcome IN ('answered', 'held_back', 'too_late') OR (variant_id IS NULL AND answer = 'nothing'));
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.outcome IS 'answered (the arm''s answer), held_out (the control group: answered {}, so Apple''s own fallback ran), held_back (the arm''s promotional offer would have exceeded the app''s discountBudget: answered {}; the answer columns say what was held back, reason says why) or too_late (the arm''s answer was decided and recorded but did not leave within server.retentionBudgetMilliseconds: Apple got {}; the answer columns say what it would have been; counted in no arm).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.follows IS 'For a first decision: the campaign''s previous first decision for the subscriber (00000000-0000-0000-0000-000000000001 when none). Unique with the subscriber and campaign: of concurrent requests that decided after the same decision, one is recorded first and the others repeat it. NULL for repeats, and for first decisions a binary older than schema 18 wrote after the upgrade.';
