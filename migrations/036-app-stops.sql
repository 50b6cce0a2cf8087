-- Upgrade of schema version 35 to 36: one stop for a whole app, and erasure over HTTP. `reclaim stop --app B` records
-- a stop that every process reads within a second: no offers handed out, the cancel sheet answered {}, grants refused,
-- refund answers held; `reclaim stop --app B --resume` ends it. POST /v1/subscribers/erasure keeps each request by its
-- Idempotency-Key, without identifiers.
-- reclaim-additive: yes
-- (Additive: two new tables; version 35's binaries read neither, so they go on serving a stopped app: stop after the
-- upgrade completes.)
--
-- reclaim-schema-version: 36

CREATE TABLE reclaim.app_stops (
    id                          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bundle_id                   text        NOT NULL,
    stopped_at                  timestamptz NOT NULL DEFAULT now(),
    stopped_by                  text        NOT NULL,
    reason                      text        NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 500),
    resumed_at                  timestamptz,
    resumed_by                  text,
    cancel_sheet_answered_empty integer     NOT NULL DEFAULT 0,
    refund_answers_expired      integer     NOT NULL DEFAULT 0,
    CHECK ((resumed_at IS NULL) = (resumed_by IS NULL))
);
CREATE UNIQUE INDEX app_stops_one_active_idx ON reclaim.app_stops (bundle_id) WHERE resumed_at IS NULL;
COMMENT ON TABLE reclaim.app_stops IS 'Stops of a whole app (reclaim stop --app B): while one has no resumed_at, no offer is handed out for the app, the cancel sheet is answered {}, grants are refused (409) and refund answers wait; campaigns go on deciding. Kept after the resume, as history.';
COMMENT ON COLUMN reclaim.app_stops.id IS 'The stop.';
COMMENT ON COLUMN reclaim.app_stops.bundle_id IS 'The app stopped.';
COMMENT ON COLUMN reclaim.app_stops.stopped_at IS 'When it was stopped.';
COMMENT ON COLUMN reclaim.app_stops.stopped_by IS 'Who stopped it (the command line''s actor, as in reclaim.audit_log).';
COMMENT ON COLUMN reclaim.app_stops.reason IS 'Why (reclaim stop --reason), shown on /readyz, the console and in the 409 of a refused grant.';
COMMENT ON COLUMN reclaim.app_stops.resumed_at IS 'When it was resumed (reclaim stop --resume); NULL while stopped.';
COMMENT ON COLUMN reclaim.app_stops.resumed_by IS 'Who resumed it.';
COMMENT ON COLUMN reclaim.app_stops.cancel_sheet_answered_empty IS 'Cancel-sheet requests answered {} because of this stop.';
COMMENT ON COLUMN reclaim.app_stops.refund_answers_expired IS 'Refund answers held by this stop until Apple''s 12 hours passed: recorded expired, never sent.';

CREATE TABLE reclaim.erasure_requests (
    api_key_id      uuid        NOT NULL,
    idempotency_key text        NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 200),
    request_hmac    bytea       NOT NULL,
    answer          jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, idempotency_key)
);
COMMENT ON TABLE reclaim.erasure_requests IS 'Erasures asked over HTTP (POST /v1/subscribers/erasure), by key and Idempotency-Key: the same key again is answered from here, and nothing is erased twice. Holds no identifier: the request as a keyed hash, the answer without the matched subscriptions.';
COMMENT ON COLUMN reclaim.erasure_requests.api_key_id IS 'The key that asked (reclaim.api_keys.id).';
COMMENT ON COLUMN reclaim.erasure_requests.idempotency_key IS 'The request''s Idempotency-Key.';
COMMENT ON COLUMN reclaim.erasure_requests.request_hmac IS 'HMAC-SHA-256 of the request (identifier, app) under the audit log''s pseudonym secret: a different body under the same key is refused (422 idempotency-key-reused).';
COMMENT ON COLUMN reclaim.erasure_requests.answer IS 'The first answer (reclaim subscribers forget --json) without matched, given again to a repeat.';
COMMENT ON COLUMN reclaim.erasure_requests.created_at IS 'When it was first asked.';
