-- Upgrade of schema version 13 to 14: running beside an existing backend. Every notification an app stores can be
-- reclaim-additive: no
-- (Not additive: version 13's workers would claim the forward and webhook jobs its triggers queue, and fail them.)
-- forwarded byte for byte to the app's other receivers, and Reclaim's own events (offers issued, delivered, redeemed,
-- withdrawn, expired; grants; refused notifications) go to Standard Webhooks receivers. Both travel through the job
-- queue, queued in the transaction of what they report, and are sent by one sender per target (jobs.target) so a
-- slow target delays nobody else. And a trigger tells the API processes of every new live offer (their in-memory
-- index of who has one).
--
-- reclaim-schema-version: 14

ALTER TABLE reclaim.jobs ADD COLUMN target text;
COMMENT ON COLUMN reclaim.jobs.target IS 'For forward and webhook jobs: the outbound target (reclaim.outbound_targets.id) they are sent to, by that target''s own sender; NULL for the workers'' jobs. They are retried for 72 hours, then dead.';
COMMENT ON COLUMN reclaim.jobs.notification_uuid IS 'The notification a process_notification job handles (or a forward job sends); at most one job per notification and kind, and one forward per notification and target.';
DROP INDEX reclaim.jobs_claim_idx;
-- Outbound jobs (target set) have indexes of their own: a dead target's backlog never lies in the workers' path.
CREATE INDEX jobs_claim_idx ON reclaim.jobs (priority DESC, run_at, id) WHERE state IN ('available', 'retryable') AND target IS NULL;
DROP INDEX reclaim.jobs_notification_idx;
CREATE UNIQUE INDEX jobs_notification_idx ON reclaim.jobs (notification_uuid, kind) WHERE notification_uuid IS NOT NULL AND target IS NULL;
-- Each target's sender reads its own due jobs in order; a notification is forwarded to a target once.
CREATE INDEX jobs_outbound_idx ON reclaim.jobs (target, run_at, id) WHERE state IN ('available', 'retryable') AND target IS NOT NULL;
CREATE UNIQUE INDEX jobs_forward_idx ON reclaim.jobs (notification_uuid, target) WHERE notification_uuid IS NOT NULL AND target IS NOT NULL;

ALTER TABLE reclaim.rejected_inputs ADD COLUMN claimed_bundle_id text;
COMMENT ON COLUMN reclaim.rejected_inputs.claimed_bundle_id IS 'The configured app a refused notification''s unverified payload names (so the app''s notification.refused webhook hears of it); NULL when it names none, or another.';

CREATE OR REPLACE VIEW reclaim.dead_jobs AS
SELECT id, kind, notification_uuid, attempts, last_error, updated_at AS died_at, target
FROM reclaim.jobs
WHERE state = 'dead';
COMMENT ON COLUMN reclaim.dead_jobs.target IS 'For forward and webhook jobs: the target it could not reach.';

-- ---------------------------------------------------------------------------------------------
-- Outbound: notification forwarding and event webhooks, delivered through the job queue.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.outbound_targets (
    id           text        PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('forward', 'webhook')),
    bundle_id    text        NOT NULL,
    url          text        NOT NULL,
    environments text[]      NOT NULL,
    events       text[]      NOT NULL DEFAULT '{}',
    paused_at    timestamptz,
    synced_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbound_targets_app_idx ON reclaim.outbound_targets (bundle_id, kind);
COMMENT ON TABLE reclaim.outbound_targets IS 'The forwarding targets and webhooks of the config (apps[].forwarding, apps[].webhooks), mirrored at start-up: what the enqueueing statements and triggers read. A target removed from the config is deleted here, and its undelivered jobs become dead.';
COMMENT ON COLUMN reclaim.outbound_targets.id IS 'kind, bundle id and URL, separated by spaces (e.g. "forward com.example.app https://backend.example.com/apple"); reclaim.jobs.target refers to it.';
COMMENT ON COLUMN reclaim.outbound_targets.kind IS 'forward (Apple''s notifications, byte for byte) or webhook (Reclaim''s own events, Standard Webhooks).';
COMMENT ON COLUMN reclaim.outbound_targets.bundle_id IS 'The app whose notifications or events go there.';
COMMENT ON COLUMN reclaim.outbound_targets.url IS 'Where they are POSTed.';
COMMENT ON COLUMN reclaim.outbound_targets.environments IS 'Environments whose notifications or events go there.';
COMMENT ON COLUMN reclaim.outbound_targets.events IS 'For webhooks: the event types sent (e.g. offer.issued); empty for forwarding.';
COMMENT ON COLUMN reclaim.outbound_targets.paused_at IS 'Set by reclaim webhooks pause: its jobs are kept (still queued, none lost) but not sent until reclaim webhooks resume. NULL: sending.';
COMMENT ON COLUMN reclaim.outbound_targets.synced_at IS 'When a process last mirrored it from its config.';

CREATE FUNCTION reclaim.iso8601(at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;
COMMENT ON FUNCTION reclaim.iso8601(timestamptz) IS 'A time as webhook payloads carry it: ISO 8601 in UTC with milliseconds, whatever the session''s TimeZone.';

-- One webhook job per subscribed target, in the transaction of the event: an event is sent if and only if it
-- happened. The id is the Standard Webhooks webhook-id, the same on every retry so receivers can dedupe.
CREATE FUNCTION reclaim.enqueue_webhooks(event_type text, bundle text, event_environment text, data jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO reclaim.jobs (kind, target, payload, max_attempts)
    SELECT 'webhook', t.id,
           jsonb_build_object('webhookId', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
                              'event', jsonb_build_object('type', event_type, 'timestamp', reclaim.iso8601(now()), 'data', data)),
           1000000
    FROM reclaim.outbound_targets t
    WHERE t.kind = 'webhook' AND t.bundle_id = bundle AND event_type = ANY (t.events)
      AND (event_environment IS NULL OR event_environment = ANY (t.environments));
    IF FOUND THEN PERFORM pg_notify('reclaim_outbound', ''); END IF;
END
$$;
COMMENT ON FUNCTION reclaim.enqueue_webhooks(text, text, text, jsonb) IS 'Queues one webhook job for each of the app''s webhooks subscribed to the event (and its environment; NULL: any).';

CREATE FUNCTION reclaim.offer_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Most apps have no webhooks: one probe of a small table, nothing built.
    IF NOT EXISTS (SELECT 1 FROM reclaim.outbound_targets t WHERE t.bundle_id = NEW.bundle_id AND t.kind = 'webhook') THEN
        RETURN NULL;
    END IF;
    PERFORM reclaim.enqueue_webhooks(
        CASE WHEN TG_OP = 'INSERT' THEN 'offer.issued' ELSE 'offer.' || NEW.state END,
        NEW.bundle_id, NEW.environment,
        jsonb_strip_nulls(jsonb_build_object(
            'offerId', NEW.id, 'bundleId', NEW.bundle_id, 'environment', NEW.environment,
            'originalTransactionId', NEW.original_transaction_id, 'appAccountToken', NEW.app_account_token,
            'campaignId', NEW.campaign_id, 'variantId', NEW.variant_id, 'grantId', NEW.grant_id,
            'productId', NEW.product_id, 'offerIdentifier', NEW.offer_identifier, 'state', NEW.state,
            'createdAt', reclaim.iso8601(NEW.created_at), 'deliverableUntil', reclaim.iso8601(NEW.deliverable_until),
            'deliveredAt', reclaim.iso8601(NEW.delivered_at), 'endedAt', reclaim.iso8601(NEW.ended_at), 'endReason', NEW.end_reason,
            'redeemedAt', reclaim.iso8601(NEW.redeemed_at), 'redeemedTransactionId', NEW.redeemed_transaction_id,
            'redeemedPrice', NEW.redeemed_price, 'redeemedCurrency', NEW.redeemed_currency)));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.offer_webhooks() IS 'offer.issued, offer.delivered (the first delivery), offer.redeemed, offer.withdrawn and offer.expired, from every statement that writes reclaim.offers.';
CREATE TRIGGER offers_issued_webhooks AFTER INSERT ON reclaim.offers
    FOR EACH ROW EXECUTE FUNCTION reclaim.offer_webhooks();
CREATE TRIGGER offers_state_webhooks AFTER UPDATE OF state ON reclaim.offers
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state AND NEW.state <> 'ready') EXECUTE FUNCTION reclaim.offer_webhooks();

-- Each API process keeps in memory which app users have a live offer (GET /v1/offers answers most launches, which
-- find none, without a query); this tells it of every new one as its transaction commits.
CREATE FUNCTION reclaim.notify_live_offer() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('reclaim_offers', 'o ' || NEW.bundle_id || ' ' || NEW.app_account_token);
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.notify_live_offer() IS 'NOTIFY reclaim_offers, ''o <bundle id> <appAccountToken>'', for every offer inserted with a token: the API processes'' live-offer index (README, GET /v1/offers).';
CREATE TRIGGER offers_live_notify AFTER INSERT ON reclaim.offers
    FOR EACH ROW WHEN (NEW.app_account_token IS NOT NULL) EXECUTE FUNCTION reclaim.notify_live_offer();

CREATE FUNCTION reclaim.grant_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM reclaim.outbound_targets t WHERE t.bundle_id = NEW.bundle_id AND t.kind = 'webhook') THEN
        RETURN NULL;
    END IF;
    PERFORM reclaim.enqueue_webhooks('grant.created', NEW.bundle_id, NULL, jsonb_strip_nulls(jsonb_build_object(
        'grantId', NEW.id, 'bundleId', NEW.bundle_id, 'appAccountToken', NEW.app_account_token,
        'originalTransactionId', NEW.original_transaction_id, 'productId', NEW.product_id,
        'offerIdentifier', NEW.offer_identifier, 'reason', NEW.reason, 'campaign', NEW.campaign,
        'createdAt', reclaim.iso8601(NEW.created_at))));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.grant_webhooks() IS 'grant.created for every grant (POST /v1/grants).';
CREATE TRIGGER grants_webhooks AFTER INSERT ON reclaim.grants FOR EACH ROW EXECUTE FUNCTION reclaim.grant_webhooks();

CREATE FUNCTION reclaim.refusal_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM reclaim.enqueue_webhooks('notification.refused', NEW.claimed_bundle_id, NULL, jsonb_build_object(
        'problem', NEW.problem, 'reason', NEW.reason, 'bodySha256', encode(NEW.body_sha256, 'hex'),
        'bodySize', NEW.body_size, 'receivedAt', reclaim.iso8601(NEW.received_at), 'claimedBundleId', NEW.claimed_bundle_id));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.refusal_webhooks() IS 'notification.refused (opt-in) for a refused notification whose unverified payload names a configured app.';
CREATE TRIGGER rejected_inputs_webhooks AFTER INSERT ON reclaim.rejected_inputs
    FOR EACH ROW WHEN (NEW.claimed_bundle_id IS NOT NULL) EXECUTE FUNCTION reclaim.refusal_webhooks();
