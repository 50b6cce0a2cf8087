-- Upgrade of schema version 11 to 12: a grant may name the Retention Messaging message Apple shows with its offer
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- (before, a grant's offer had none unless its campaign label was a configured campaign's id).
--
-- reclaim-schema-version: 12

ALTER TABLE reclaim.grants ADD COLUMN message_identifier text;
COMMENT ON COLUMN reclaim.grants.message_identifier IS 'Retention Messaging: the approved message Apple shows with this grant''s offer; NULL: the message of the configured campaign named like the grant''s campaign, if any.';
