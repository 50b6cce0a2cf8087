-- Upgrade of schema version 22 to 23: a replayed Retention Messaging request (the same requestIdentifier) is answered
-- from the decision recorded for it, found by this index.
-- reclaim-additive: yes
-- (Additive: an index; version 22's binaries do not need it.)
--
-- reclaim-schema-version: 23

CREATE INDEX cancel_sheet_decisions_request_idx ON reclaim.cancel_sheet_decisions (request_identifier);
