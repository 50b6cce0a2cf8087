-- Reclaim's database schema: the source of truth.
--
-- `reclaim migrate` applies this file in one transaction under an advisory lock and records
-- the version below in reclaim.schema_migrations, so running it twice, or from two processes
-- at once, leaves one consistent schema. The binary compiles this file in (Package.swift embeds
-- it; ReclaimStore's SchemaSQL): there is no other copy.
--
-- reclaim-schema-version: 37
--
-- A database at an older version is upgraded by the scripts in migrations/ (NNN-name.sql takes
-- version NNN-1 to NNN); applying this file to an empty database gives the same result.
--
-- Conventions for dashboard authors: every time is a timestamptz in UTC; Apple's identifiers
-- (transaction ids, bundle ids) are text exactly as Apple sends them; UUIDs are uuid.

CREATE SCHEMA IF NOT EXISTS reclaim;
COMMENT ON SCHEMA reclaim IS 'Reclaim: App Store subscription win-back and retention. See README.md.';

-- ---------------------------------------------------------------------------------------------
-- Notifications: every App Store Server Notification accepted, exactly once.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.notifications (
    notification_uuid       uuid        PRIMARY KEY,
    notification_type       text        NOT NULL,
    subtype                 text,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    signed_date             timestamptz NOT NULL,
    original_transaction_id text,
    transaction_id          text,
    app_account_token       uuid,
    product_id              text,
    signed_payload          text        NOT NULL,
    received_at             timestamptz NOT NULL DEFAULT now(),
    source                  text        NOT NULL DEFAULT 'apple' CHECK (source IN ('apple', 'backfill'))
);
CREATE INDEX notifications_subscriber_idx ON reclaim.notifications (bundle_id, environment, original_transaction_id, signed_date);
CREATE INDEX notifications_received_idx ON reclaim.notifications (received_at);
COMMENT ON TABLE reclaim.notifications IS 'Every App Store Server Notification V2 that passed verification, one row per notificationUUID (Apple retries reuse the UUID). Written in the same transaction as its processing job; answered 200 only after commit.';
COMMENT ON COLUMN reclaim.notifications.notification_uuid IS 'Apple''s notificationUUID; identical on every retry, so it is the deduplication key.';
COMMENT ON COLUMN reclaim.notifications.notification_type IS 'Apple''s notificationType, e.g. SUBSCRIBED, DID_RENEW, DID_CHANGE_RENEWAL_STATUS, EXPIRED, OFFER_REDEEMED, TEST. Unknown future values are stored as sent.';
COMMENT ON COLUMN reclaim.notifications.subtype IS 'Apple''s subtype, e.g. AUTO_RENEW_DISABLED, VOLUNTARY, RESUBSCRIBE; NULL when Apple sent none.';
COMMENT ON COLUMN reclaim.notifications.bundle_id IS 'The app''s bundle id from the payload (data.bundleId or summary.bundleId).';
COMMENT ON COLUMN reclaim.notifications.environment IS 'Sandbox or Production (Xcode, LocalTesting in development).';
COMMENT ON COLUMN reclaim.notifications.signed_date IS 'When Apple signed the notification (payload signedDate). The certificate chain is checked at this time.';
COMMENT ON COLUMN reclaim.notifications.original_transaction_id IS 'originalTransactionId of the subscription, from the nested signed transaction; NULL for TEST and summary notifications.';
COMMENT ON COLUMN reclaim.notifications.transaction_id IS 'transactionId of the nested signed transaction, if any.';
COMMENT ON COLUMN reclaim.notifications.app_account_token IS 'The appAccountToken the app set on the purchase (the app''s own user id), if any.';
COMMENT ON COLUMN reclaim.notifications.product_id IS 'productId of the nested signed transaction, if any.';
COMMENT ON COLUMN reclaim.notifications.signed_payload IS 'The raw signedPayload JWS exactly as Apple sent it, kept for audit and re-processing.';
-- lz4 where the server has it: pglz cost a fifth of the ingest path's CPU (migrations/002-notifications-lz4.sql).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE reclaim.notifications ALTER COLUMN signed_payload SET COMPRESSION lz4;
    END IF;
END
$$;
COMMENT ON COLUMN reclaim.notifications.received_at IS 'When Reclaim committed the notification.';
COMMENT ON COLUMN reclaim.notifications.source IS 'apple: a notification Apple sent (or its history returned). backfill: the state reclaim backfill --evaluate read from Get All Subscription Statuses, stored as the notification it implies (e.g. EXPIRED/VOLUNTARY) so campaign decisions can refer to it; signed_payload then holds the signed transaction info. Dashboards of Apple''s notifications filter on source = ''apple''.';

-- ---------------------------------------------------------------------------------------------
-- Job queue: durable work between ingest and the campaign engine.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.jobs (
    id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind              text        NOT NULL,
    payload           jsonb       NOT NULL DEFAULT '{}'::jsonb,
    notification_uuid uuid        REFERENCES reclaim.notifications (notification_uuid),
    state             text        NOT NULL DEFAULT 'available'
                                  CHECK (state IN ('available', 'running', 'retryable', 'completed', 'dead')),
    priority          smallint    NOT NULL DEFAULT 0,
    attempts          integer     NOT NULL DEFAULT 0,
    max_attempts      integer     NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    run_at            timestamptz NOT NULL DEFAULT now(),
    locked_by         text,
    lease_expires_at  timestamptz,
    last_error        text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    completed_at      timestamptz,
    claimed_at        timestamptz,
    target            text
);
-- Claiming reads this partial index in order and stops after the batch: O(log n) at any table size.
-- Outbound jobs (target set) have indexes of their own: a dead target's backlog never lies in the workers' path.
CREATE INDEX jobs_claim_idx ON reclaim.jobs (priority DESC, run_at, id) WHERE state IN ('available', 'retryable') AND target IS NULL;
CREATE INDEX jobs_lease_idx ON reclaim.jobs (lease_expires_at) WHERE state = 'running';
CREATE INDEX jobs_completed_idx ON reclaim.jobs (completed_at) WHERE state = 'completed';
CREATE INDEX jobs_dead_idx ON reclaim.jobs (id) WHERE state = 'dead';
-- The call lanes' claim (one job of a kind that calls Apple, oldest first), apart from the batches' index: a backlog of
-- notifications never lies in its path. Its predicate names the kinds (WorkerPool's call lanes, RefundRequests.jobKind).
CREATE INDEX jobs_call_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'refund_answer';
-- The call lanes' claim of renewal-date extensions (RenewalExtensions.jobKind), as jobs_call_claim_idx is refund answers'.
CREATE INDEX jobs_extension_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'renewal_extension';
-- The call lanes' claim of Set App Account Token calls (AccountTokenRepair.jobKind), as jobs_call_claim_idx is refund answers'.
CREATE INDEX jobs_account_token_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'app_account_token';
CREATE UNIQUE INDEX jobs_notification_idx ON reclaim.jobs (notification_uuid, kind) WHERE notification_uuid IS NOT NULL AND target IS NULL;
-- Each target's sender reads its own due jobs in order; a notification is forwarded to a target once.
CREATE INDEX jobs_outbound_idx ON reclaim.jobs (target, run_at, id) WHERE state IN ('available', 'retryable') AND target IS NOT NULL;
CREATE UNIQUE INDEX jobs_forward_idx ON reclaim.jobs (notification_uuid, target) WHERE notification_uuid IS NOT NULL AND target IS NOT NULL;
COMMENT ON TABLE reclaim.jobs IS 'The durable job queue. Workers claim batches with FOR UPDATE SKIP LOCKED and complete each job in the same transaction as its effects. Completed jobs are pruned after a retention period.';
COMMENT ON COLUMN reclaim.jobs.id IS 'Job id, increasing in enqueue order.';
COMMENT ON COLUMN reclaim.jobs.kind IS 'What the job does, e.g. process_notification; selects the handler.';
COMMENT ON COLUMN reclaim.jobs.payload IS 'Handler arguments as JSON.';
COMMENT ON COLUMN reclaim.jobs.notification_uuid IS 'The notification a process_notification job handles (or a forward job sends); at most one job per notification and kind, and one forward per notification and target.';
COMMENT ON COLUMN reclaim.jobs.state IS 'available (waiting), running (leased to a worker), retryable (failed, waits for run_at), completed, dead (failed max_attempts times; see last_error; requeue with `reclaim jobs dead --retry`).';
COMMENT ON COLUMN reclaim.jobs.priority IS 'Higher runs first.';
COMMENT ON COLUMN reclaim.jobs.attempts IS 'How many times a worker has started this job.';
COMMENT ON COLUMN reclaim.jobs.max_attempts IS 'After this many failed attempts the job becomes dead.';
COMMENT ON COLUMN reclaim.jobs.run_at IS 'Not claimed before this time (backoff after a failure).';
COMMENT ON COLUMN reclaim.jobs.locked_by IS 'The worker (host:pid:pool) holding the lease while running.';
COMMENT ON COLUMN reclaim.jobs.lease_expires_at IS 'A running job whose lease expires (its worker died) is returned to available by the rescuer.';
COMMENT ON COLUMN reclaim.jobs.last_error IS 'The error of the latest failed attempt.';
COMMENT ON COLUMN reclaim.jobs.created_at IS 'When the job was enqueued.';
COMMENT ON COLUMN reclaim.jobs.updated_at IS 'Last state change.';
COMMENT ON COLUMN reclaim.jobs.completed_at IS 'When the job completed (with its effects, in the same transaction).';
COMMENT ON COLUMN reclaim.jobs.claimed_at IS 'When the current or last attempt was claimed by a worker. A job running much longer than worker.lease is stuck (reclaim_jobs_oldest_running_age_seconds). NULL: never claimed, or claimed before schema 10.';
COMMENT ON COLUMN reclaim.jobs.target IS 'For forward and webhook jobs: the outbound target (reclaim.outbound_targets.id) they are sent to, by that target''s own sender; NULL for the workers'' jobs. They are retried for 72 hours, then dead.';

-- ---------------------------------------------------------------------------------------------
-- Subscriptions: the latest known state of each subscription, kept by the workers.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.subscriptions (
    bundle_id                text        NOT NULL,
    environment              text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    app_account_token        uuid,
    product_id               text,
    status                   text        NOT NULL DEFAULT 'unknown',
    auto_renew               boolean,
    expires_at               timestamptz,
    last_notification_type   text,
    last_subtype             text,
    last_signed_date         timestamptz,
    last_notification_uuid   uuid,
    first_seen_at            timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    subscription_group_id    text,
    auto_renew_product_id    text,
    expiration_intent        smallint,
    in_billing_retry         boolean,
    grace_period_expires_at  timestamptz,
    eligible_win_back_offer_ids text[]  NOT NULL DEFAULT '{}',
    storefront               text,
    first_purchase_at        timestamptz,
    last_transaction_id      text,
    app_transaction_id       text,
    consent_rescinded_at     timestamptz,
    billing_plan_type        text,
    billing_period_number    smallint,
    total_billing_periods    smallint,
    commitment_expires_at    timestamptz,
    commitment_price         bigint,
    commitment_auto_renew    boolean,
    PRIMARY KEY (bundle_id, environment, original_transaction_id),
    CONSTRAINT subscriptions_status_check
        CHECK (status IN ('active', 'expired', 'billing_retry', 'grace_period', 'revoked', 'refunded', 'unknown'))
);
CREATE INDEX subscriptions_token_idx ON reclaim.subscriptions (bundle_id, app_account_token) WHERE app_account_token IS NOT NULL;
COMMENT ON TABLE reclaim.subscriptions IS 'One row per subscription (originalTransactionId, bundle, environment): its latest state as told by Apple''s notifications, applied in signedDate order.';
COMMENT ON COLUMN reclaim.subscriptions.bundle_id IS 'The app''s bundle id.';
COMMENT ON COLUMN reclaim.subscriptions.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.subscriptions.original_transaction_id IS 'Apple''s originalTransactionId: stable for the life of the subscription.';
COMMENT ON COLUMN reclaim.subscriptions.app_account_token IS 'The app''s user id carried by the purchases, if the app sets one; offers are delivered by it.';
COMMENT ON COLUMN reclaim.subscriptions.product_id IS 'The product of the latest transaction.';
COMMENT ON COLUMN reclaim.subscriptions.status IS 'active, expired, billing_retry, grace_period, revoked, refunded (REFUND notification), or unknown.';
COMMENT ON COLUMN reclaim.subscriptions.auto_renew IS 'Whether auto-renew is on (renewal info autoRenewStatus).';
COMMENT ON COLUMN reclaim.subscriptions.expires_at IS 'expiresDate of the latest transaction.';
COMMENT ON COLUMN reclaim.subscriptions.last_notification_type IS 'Type of the latest notification applied.';
COMMENT ON COLUMN reclaim.subscriptions.last_subtype IS 'Subtype of the latest notification applied.';
COMMENT ON COLUMN reclaim.subscriptions.last_signed_date IS 'signedDate of the latest notification applied; older ones arriving late do not overwrite state.';
COMMENT ON COLUMN reclaim.subscriptions.last_notification_uuid IS 'The latest notification applied.';
COMMENT ON COLUMN reclaim.subscriptions.first_seen_at IS 'When Reclaim first heard of this subscription.';
COMMENT ON COLUMN reclaim.subscriptions.updated_at IS 'Last change of this row.';
COMMENT ON COLUMN reclaim.subscriptions.subscription_group_id IS 'subscriptionGroupIdentifier of the latest transaction.';
COMMENT ON COLUMN reclaim.subscriptions.auto_renew_product_id IS 'The product the subscription renews to (renewal info autoRenewProductId).';
COMMENT ON COLUMN reclaim.subscriptions.expiration_intent IS 'Why it expired (renewal info expirationIntent): 1 customer cancelled, 2 billing error, 3 declined a price increase, 4 product not available, 5 other; NULL while it has not expired.';
COMMENT ON COLUMN reclaim.subscriptions.in_billing_retry IS 'Whether Apple is still trying to bill (renewal info isInBillingRetryPeriod).';
COMMENT ON COLUMN reclaim.subscriptions.grace_period_expires_at IS 'End of the billing grace period, if in one (renewal info gracePeriodExpiresDate).';
COMMENT ON COLUMN reclaim.subscriptions.eligible_win_back_offer_ids IS 'Win-back offers Apple itself lists for this subscriber (renewal info eligibleWinBackOfferIds), best first; campaigns can stand aside for them.';
COMMENT ON COLUMN reclaim.subscriptions.storefront IS 'Three-letter App Store storefront of the latest transaction, e.g. USA.';
COMMENT ON COLUMN reclaim.subscriptions.first_purchase_at IS 'originalPurchaseDate: when the subscriber first bought; tenure is measured from it.';
COMMENT ON COLUMN reclaim.subscriptions.last_transaction_id IS 'transactionId of the latest transaction applied.';
COMMENT ON COLUMN reclaim.subscriptions.app_transaction_id IS 'appTransactionId of the newest transaction or renewal info carrying it: the app account (one per Apple Account and family member), how a RESCIND_CONSENT finds its subscriptions.';
COMMENT ON COLUMN reclaim.subscriptions.consent_rescinded_at IS 'When a parent or guardian withdrew consent for the app (RESCIND_CONSENT, its signedDate): no campaign, grant or cancel-sheet answer reaches the subscriber from then on. NULL: not withdrawn.';
COMMENT ON COLUMN reclaim.subscriptions.billing_plan_type IS 'billingPlanType of the newest transaction naming one, as Apple sends it: MONTHLY (monthly payments with a 12-month commitment) or BILLED_UPFRONT. NULL: unknown (no transaction named a plan).';
COMMENT ON COLUMN reclaim.subscriptions.billing_period_number IS 'commitmentInfo.billingPeriodNumber of the newest transaction: this period''s number within the commitment (3 of 12).';
COMMENT ON COLUMN reclaim.subscriptions.total_billing_periods IS 'commitmentInfo.totalBillingPeriods: the commitment''s periods (12).';
COMMENT ON COLUMN reclaim.subscriptions.commitment_expires_at IS 'commitmentInfo.commitmentExpiresDate: when the commitment ends.';
COMMENT ON COLUMN reclaim.subscriptions.commitment_price IS 'commitmentInfo.commitmentPrice, in milliunits of the currency.';
COMMENT ON COLUMN reclaim.subscriptions.commitment_auto_renew IS 'Renewal info''s commitmentInfo.commitmentAutoRenewStatus = 1: the commitment renews at its end (auto_renew describes the next monthly payment only). NULL: no commitment known.';
CREATE INDEX subscriptions_app_transaction_idx ON reclaim.subscriptions (bundle_id, environment, app_transaction_id) WHERE app_transaction_id IS NOT NULL;

-- ---------------------------------------------------------------------------------------------
-- Campaigns and offers.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.campaigns (
    id               text        PRIMARY KEY,
    bundle_id        text        NOT NULL,
    trigger          text        NOT NULL,
    product_id       text        NOT NULL,
    offer_identifier text        NOT NULL,
    deliverable_for  interval    NOT NULL,
    cooldown         interval    NOT NULL,
    holdout_percent  smallint    NOT NULL DEFAULT 0 CHECK (holdout_percent BETWEEN 0 AND 100),
    priority         integer     NOT NULL DEFAULT 0,
    enabled          boolean     NOT NULL DEFAULT true,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    max_offers_per_subscriber integer,
    starts_at        timestamptz,
    ends_at          timestamptz,
    stand_aside_for_win_back boolean NOT NULL DEFAULT true,
    conditions       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    paused_at        timestamptz,
    paused_reason    text
);
COMMENT ON TABLE reclaim.campaigns IS 'Campaigns as configured in RECLAIM_CONFIG, mirrored here at start-up so dashboards can join on them. The YAML file is authoritative.';
COMMENT ON COLUMN reclaim.campaigns.id IS 'Campaign id from the config, e.g. retain-auto-renew-off.';
COMMENT ON COLUMN reclaim.campaigns.bundle_id IS 'The app the campaign runs for.';
COMMENT ON COLUMN reclaim.campaigns.trigger IS 'TYPE or TYPE/SUBTYPE of the notification that makes a subscriber eligible, or RETENTION_MESSAGING: a cancel-sheet campaign, which answers Apple''s Retention Messaging realtime requests (reclaim.cancel_sheet_decisions).';
COMMENT ON COLUMN reclaim.campaigns.product_id IS 'Product the offer applies to.';
COMMENT ON COLUMN reclaim.campaigns.offer_identifier IS 'The promotional offer id configured in App Store Connect.';
COMMENT ON COLUMN reclaim.campaigns.deliverable_for IS 'How long an issued offer stays deliverable.';
COMMENT ON COLUMN reclaim.campaigns.cooldown IS 'Minimum time between two offers of this campaign to one subscriber.';
COMMENT ON COLUMN reclaim.campaigns.holdout_percent IS 'Share of eligible subscribers deliberately given no offer (control group), for measuring lift.';
COMMENT ON COLUMN reclaim.campaigns.priority IS 'When several campaigns fire at once, the highest priority wins.';
COMMENT ON COLUMN reclaim.campaigns.enabled IS 'false when the campaign was removed from the config.';
COMMENT ON COLUMN reclaim.campaigns.updated_at IS 'When the config last changed this row.';
COMMENT ON COLUMN reclaim.campaigns.max_offers_per_subscriber IS 'Most offers of this campaign one subscriber ever gets; NULL for no limit.';
COMMENT ON COLUMN reclaim.campaigns.starts_at IS 'Notifications signed before this do not trigger the campaign; NULL for no start.';
COMMENT ON COLUMN reclaim.campaigns.ends_at IS 'Notifications signed at or after this do not trigger the campaign; NULL for no end.';
COMMENT ON COLUMN reclaim.campaigns.stand_aside_for_win_back IS 'Skip subscribers for whom Apple already lists win-back offers (eligibleWinBackOfferIds).';
COMMENT ON COLUMN reclaim.campaigns.conditions IS 'Conditions from the config as JSON: products, minimumTenureSeconds, expirationIntents, storefronts.';
COMMENT ON COLUMN reclaim.campaigns.paused_at IS 'Set by reclaim campaigns pause: the campaign is switched off at once, on every server, until reclaim campaigns resume. NULL: running.';
COMMENT ON COLUMN reclaim.campaigns.paused_reason IS 'What reclaim campaigns pause --reason said; NULL when none was given.';

CREATE TABLE reclaim.grants (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    idempotency_key         text        NOT NULL,
    app_account_token       uuid,
    original_transaction_id text,
    product_id              text        NOT NULL,
    offer_identifier        text        NOT NULL,
    reason                  text        NOT NULL,
    campaign                text        NOT NULL,
    admin_key_id            uuid,
    created_at              timestamptz NOT NULL DEFAULT now(),
    request_sha256          bytea,
    message_identifier      text,
    UNIQUE (bundle_id, idempotency_key),
    CHECK (app_account_token IS NOT NULL OR original_transaction_id IS NOT NULL)
);
COMMENT ON TABLE reclaim.grants IS 'Referral and incentive grants made through POST /v1/grants; each becomes an offer. The Idempotency-Key makes a retried request return the first result.';
COMMENT ON COLUMN reclaim.grants.id IS 'Grant id.';
COMMENT ON COLUMN reclaim.grants.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.grants.idempotency_key IS 'The request''s Idempotency-Key header, unique per app.';
COMMENT ON COLUMN reclaim.grants.app_account_token IS 'The subscriber, by the app''s user id.';
COMMENT ON COLUMN reclaim.grants.original_transaction_id IS 'The subscriber, by Apple''s originalTransactionId.';
COMMENT ON COLUMN reclaim.grants.product_id IS 'Product the offer applies to.';
COMMENT ON COLUMN reclaim.grants.offer_identifier IS 'Promotional offer id in App Store Connect.';
COMMENT ON COLUMN reclaim.grants.reason IS 'Free text: why the grant was made (e.g. referral).';
COMMENT ON COLUMN reclaim.grants.campaign IS 'Label for reporting, e.g. referral-2026.';
COMMENT ON COLUMN reclaim.grants.admin_key_id IS 'The admin key that made the grant.';
COMMENT ON COLUMN reclaim.grants.created_at IS 'When the grant was made.';
COMMENT ON COLUMN reclaim.grants.request_sha256 IS 'SHA-256 of the normalized request (every field, defaults applied): the same Idempotency-Key with any other request is refused (422 idempotency-key-reused). NULL for grants made before schema 9, which are compared on their stored fields.';
COMMENT ON COLUMN reclaim.grants.message_identifier IS 'Retention Messaging: the approved message Apple shows with this grant''s offer; NULL: the message of the configured campaign named like the grant''s campaign, if any.';

CREATE TABLE reclaim.renewal_extensions (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    app_account_token       uuid,
    idempotency_key         text        NOT NULL,
    request_sha256          bytea,
    admin_key_id            uuid,
    reason                  text        NOT NULL,
    campaign                text        NOT NULL,
    extend_by_days          integer     NOT NULL CHECK (extend_by_days BETWEEN 1 AND 90),
    extend_reason_code      integer     NOT NULL CHECK (extend_reason_code BETWEEN 0 AND 3),
    status                  text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'extended', 'refused')),
    created_at              timestamptz NOT NULL DEFAULT now(),
    settled_at              timestamptz,
    effective_date          timestamptz,
    web_order_line_item_id  text,
    apple_status            integer,
    apple_error             text,
    UNIQUE (bundle_id, idempotency_key),
    CHECK (length(idempotency_key) BETWEEN 1 AND 128)
);
CREATE INDEX renewal_extensions_subscription_idx ON reclaim.renewal_extensions (bundle_id, environment, original_transaction_id, created_at);
COMMENT ON TABLE reclaim.renewal_extensions IS 'Make-goods: renewal-date extensions granted through POST /v1/grants (kind extension) and sent to Apple''s Extend a Subscription Renewal Date, one call per row, with Apple''s outcome.';
COMMENT ON COLUMN reclaim.renewal_extensions.id IS 'Grant id.';
COMMENT ON COLUMN reclaim.renewal_extensions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.renewal_extensions.environment IS 'The subscription''s environment, Sandbox or Production.';
COMMENT ON COLUMN reclaim.renewal_extensions.original_transaction_id IS 'The subscription extended (Apple''s originalTransactionId); a pseudonym once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.app_account_token IS 'The subscriber as the request named them, if by the app''s user id.';
COMMENT ON COLUMN reclaim.renewal_extensions.idempotency_key IS 'The request''s Idempotency-Key, unique per app, sent to Apple as requestIdentifier (at most 128 characters, Apple''s limit): a call sent again after a lost answer is the same request to Apple. forgotten:<id> once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.request_sha256 IS 'SHA-256 of the normalized request: the same Idempotency-Key with another request is refused (422 idempotency-key-reused). NULL once the subscriber is forgotten.';
COMMENT ON COLUMN reclaim.renewal_extensions.admin_key_id IS 'The admin key that made the grant.';
COMMENT ON COLUMN reclaim.renewal_extensions.reason IS 'Free text: why (e.g. the outage of 2026-11-20).';
COMMENT ON COLUMN reclaim.renewal_extensions.campaign IS 'Label for reporting (default make-good).';
COMMENT ON COLUMN reclaim.renewal_extensions.extend_by_days IS 'Apple''s extendByDays: 1 to 90.';
COMMENT ON COLUMN reclaim.renewal_extensions.extend_reason_code IS 'Apple''s extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.';
COMMENT ON COLUMN reclaim.renewal_extensions.status IS 'pending (not yet answered by Apple), extended (Apple answered success: effective_date), refused (Apple answered an error no retry cures, or refused the key for 24 hours: apple_error).';
COMMENT ON COLUMN reclaim.renewal_extensions.created_at IS 'When the grant was made.';
COMMENT ON COLUMN reclaim.renewal_extensions.settled_at IS 'When Apple''s answer was recorded.';
COMMENT ON COLUMN reclaim.renewal_extensions.effective_date IS 'Apple''s effectiveDate: the subscription''s new expiration date.';
COMMENT ON COLUMN reclaim.renewal_extensions.web_order_line_item_id IS 'Apple''s webOrderLineItemId of the extended period.';
COMMENT ON COLUMN reclaim.renewal_extensions.apple_status IS 'The HTTP status of Apple''s last answer.';
COMMENT ON COLUMN reclaim.renewal_extensions.apple_error IS 'Apple''s error, named (e.g. 4030005 SubscriptionMaxExtensionError), when refused; the last failed attempt''s while pending.';

CREATE TABLE reclaim.mass_extensions (
    bundle_id                 text        NOT NULL,
    environment               text        NOT NULL,
    request_identifier        text        NOT NULL CHECK (length(request_identifier) BETWEEN 1 AND 128),
    product_id                text        NOT NULL,
    extend_by_days            integer     NOT NULL CHECK (extend_by_days BETWEEN 1 AND 90),
    extend_reason_code        integer     NOT NULL CHECK (extend_reason_code BETWEEN 0 AND 3),
    storefront_country_codes  text[],
    reason                    text        NOT NULL,
    actor                     text        NOT NULL,
    requested_at              timestamptz NOT NULL DEFAULT now(),
    accepted_at               timestamptz,
    apple_error               text,
    checked_at                timestamptz,
    complete_date             timestamptz,
    succeeded_count           bigint,
    failed_count              bigint,
    summary_notification_uuid uuid,
    summary_succeeded_count   bigint,
    summary_failed_count      bigint,
    PRIMARY KEY (bundle_id, environment, request_identifier)
);
CREATE INDEX mass_extensions_product_idx ON reclaim.mass_extensions (bundle_id, environment, product_id, requested_at);
COMMENT ON TABLE reclaim.mass_extensions IS 'Outage make-goods: Apple''s Extend Subscription Renewal Dates for All Active Subscribers, one row per product and request, with the status Apple last gave and its RENEWAL_EXTENSION summary notification.';
COMMENT ON COLUMN reclaim.mass_extensions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.mass_extensions.environment IS 'Sandbox or Production: the environment Apple was asked in.';
COMMENT ON COLUMN reclaim.mass_extensions.request_identifier IS 'Apple''s requestIdentifier (at most 128 characters): the status call and the summary notification name it.';
COMMENT ON COLUMN reclaim.mass_extensions.product_id IS 'The product whose active subscribers are extended (one product per request, as Apple''s API takes it).';
COMMENT ON COLUMN reclaim.mass_extensions.extend_by_days IS 'Apple''s extendByDays: 1 to 90.';
COMMENT ON COLUMN reclaim.mass_extensions.extend_reason_code IS 'Apple''s extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.';
COMMENT ON COLUMN reclaim.mass_extensions.storefront_country_codes IS 'Apple''s storefrontCountryCodes when the request was limited to some storefronts; NULL: all.';
COMMENT ON COLUMN reclaim.mass_extensions.reason IS 'Free text: why (e.g. the outage of 2026-11-20).';
COMMENT ON COLUMN reclaim.mass_extensions.actor IS 'Who ran the command (--actor, RECLAIM_ACTOR or the operating-system user).';
COMMENT ON COLUMN reclaim.mass_extensions.requested_at IS 'When Reclaim recorded the request, before Apple was asked.';
COMMENT ON COLUMN reclaim.mass_extensions.accepted_at IS 'When Apple answered 200 (the request is then Apple''s to process, for hours or days); NULL: not yet, or refused.';
COMMENT ON COLUMN reclaim.mass_extensions.apple_error IS 'Apple''s refusal of the request, named (e.g. 4000023 InvalidProductIdError).';
COMMENT ON COLUMN reclaim.mass_extensions.checked_at IS 'When Apple''s status was last read (Get Status of Subscription Renewal Date Extensions).';
COMMENT ON COLUMN reclaim.mass_extensions.complete_date IS 'Apple''s completeDate, once complete.';
COMMENT ON COLUMN reclaim.mass_extensions.succeeded_count IS 'Apple''s succeededCount from the status call.';
COMMENT ON COLUMN reclaim.mass_extensions.failed_count IS 'Apple''s failedCount from the status call.';
COMMENT ON COLUMN reclaim.mass_extensions.summary_notification_uuid IS 'The RENEWAL_EXTENSION/SUMMARY notification that names this request (reclaim.notifications).';
COMMENT ON COLUMN reclaim.mass_extensions.summary_succeeded_count IS 'succeededCount as the summary notification gives it.';
COMMENT ON COLUMN reclaim.mass_extensions.summary_failed_count IS 'failedCount as the summary notification gives it.';

CREATE TABLE reclaim.app_account_token_updates (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    app_account_token       uuid        NOT NULL,
    replaces_token          uuid,
    source                  text        NOT NULL CHECK (source IN ('earlier-transaction', 'lookup')),
    status                  text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'set', 'refused')),
    created_at              timestamptz NOT NULL DEFAULT now(),
    settled_at              timestamptz,
    apple_status            integer,
    apple_error             text,
    UNIQUE (bundle_id, environment, original_transaction_id, app_account_token)
);
COMMENT ON TABLE reclaim.app_account_token_updates IS 'Set App Account Token calls (apps[].setAppAccountToken): the token Reclaim knows for a subscription whose transaction from Apple carries none (or another), sent once per subscription and token.';
COMMENT ON COLUMN reclaim.app_account_token_updates.id IS 'The update''s id.';
COMMENT ON COLUMN reclaim.app_account_token_updates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.app_account_token_updates.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.app_account_token_updates.original_transaction_id IS 'The subscription (Apple''s originalTransactionId: the call takes original ids only).';
COMMENT ON COLUMN reclaim.app_account_token_updates.app_account_token IS 'The token set: the app''s user id for this subscriber.';
COMMENT ON COLUMN reclaim.app_account_token_updates.replaces_token IS 'The token Apple''s transaction held, when the app is configured to correct it (setAppAccountToken: correct); NULL: Apple''s held none.';
COMMENT ON COLUMN reclaim.app_account_token_updates.source IS 'How Reclaim knew the token: earlier-transaction (an earlier transaction of the subscription carried it), lookup (POST /v1/offers/lookup with the signed transaction and a user token the team''s backend made for it).';
COMMENT ON COLUMN reclaim.app_account_token_updates.status IS 'pending (not yet answered by Apple), set (Apple answered 200), refused (Apple answered an error no retry cures: apple_error).';
COMMENT ON COLUMN reclaim.app_account_token_updates.created_at IS 'When Reclaim decided to set it.';
COMMENT ON COLUMN reclaim.app_account_token_updates.settled_at IS 'When Apple''s answer was recorded.';
COMMENT ON COLUMN reclaim.app_account_token_updates.apple_status IS 'The HTTP status of Apple''s last answer.';
COMMENT ON COLUMN reclaim.app_account_token_updates.apple_error IS 'Apple''s error, named (e.g. 4000185 FamilyTransactionNotSupportedError), when refused.';

-- Make-goods as a kind of their own: days given through Apple, beside the discounts of discount_channels_daily.
CREATE VIEW reclaim.make_goods_daily AS
SELECT x.bundle_id,
       x.environment,
       (date_trunc('day', x.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS day,
       'extension'::text AS kind,
       x.status,
       count(*) AS requests,
       count(DISTINCT x.original_transaction_id) FILTER (WHERE x.status = 'extended') AS subscribers_extended,
       coalesce(sum(x.extend_by_days) FILTER (WHERE x.status = 'extended'), 0) AS days_given
FROM reclaim.renewal_extensions x
GROUP BY 1, 2, 3, 4, 5
UNION ALL
SELECT m.bundle_id,
       m.environment,
       (date_trunc('day', m.requested_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
       'mass_extension',
       CASE WHEN m.apple_error IS NOT NULL THEN 'refused'
            WHEN m.complete_date IS NOT NULL OR m.summary_notification_uuid IS NOT NULL THEN 'complete'
            ELSE 'pending' END,
       count(*),
       coalesce(sum(coalesce(m.summary_succeeded_count, m.succeeded_count)), 0),
       coalesce(sum(m.extend_by_days * coalesce(m.summary_succeeded_count, m.succeeded_count)), 0)
FROM reclaim.mass_extensions m
GROUP BY 1, 2, 3, 4, 5;
COMMENT ON VIEW reclaim.make_goods_daily IS 'Make-goods per UTC day: renewal-date extensions through Apple, for one subscriber (POST /v1/grants, kind extension) or every active subscriber of a product (reclaim extensions all), by outcome.';
COMMENT ON COLUMN reclaim.make_goods_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.make_goods_daily.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.make_goods_daily.day IS 'The UTC day the grant was made, or the mass extension requested.';
COMMENT ON COLUMN reclaim.make_goods_daily.kind IS 'extension (one subscriber) or mass_extension (every active subscriber of one product).';
COMMENT ON COLUMN reclaim.make_goods_daily.status IS 'extension: pending, extended or refused; mass_extension: pending (Apple is extending), complete or refused.';
COMMENT ON COLUMN reclaim.make_goods_daily.requests IS 'Grants, or mass-extension requests (one per product).';
COMMENT ON COLUMN reclaim.make_goods_daily.subscribers_extended IS 'Subscriptions Apple extended (a mass extension: Apple''s succeededCount, from its summary notification or status).';
COMMENT ON COLUMN reclaim.make_goods_daily.days_given IS 'Days of service given: extendByDays times the subscriptions extended.';

CREATE TABLE reclaim.campaign_decisions (
    id                      uuid        PRIMARY KEY,
    campaign_id             text        NOT NULL,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    app_account_token       uuid,
    notification_uuid       uuid        NOT NULL REFERENCES reclaim.notifications (notification_uuid),
    triggered_at            timestamptz NOT NULL,
    outcome                 text        NOT NULL CHECK (outcome IN ('offered', 'held_out', 'skipped')),
    reason                  text        NOT NULL,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    variant_id              text,
    billing_plan_type       text,
    apple_win_back_listed   boolean,
    UNIQUE (campaign_id, notification_uuid)
);
CREATE INDEX campaign_decisions_subscriber_idx ON reclaim.campaign_decisions (bundle_id, environment, original_transaction_id, campaign_id, triggered_at);
CREATE INDEX campaign_decisions_decided_idx ON reclaim.campaign_decisions (decided_at);
COMMENT ON TABLE reclaim.campaign_decisions IS 'Every time a notification triggered a campaign for a subscriber: offered, held out (control group) or skipped, with the reason in words. The denominator of every funnel; written in the same transaction as the notification''s job.';
COMMENT ON COLUMN reclaim.campaign_decisions.id IS 'Decision id.';
COMMENT ON COLUMN reclaim.campaign_decisions.campaign_id IS 'The campaign (reclaim.campaigns.id).';
COMMENT ON COLUMN reclaim.campaign_decisions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_decisions.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.campaign_decisions.original_transaction_id IS 'The subscriber''s subscription.';
COMMENT ON COLUMN reclaim.campaign_decisions.app_account_token IS 'The subscriber''s app user id, if known.';
COMMENT ON COLUMN reclaim.campaign_decisions.notification_uuid IS 'The notification that triggered the campaign; one decision per campaign and notification.';
COMMENT ON COLUMN reclaim.campaign_decisions.triggered_at IS 'signedDate of the triggering notification: cooldowns, date windows and tenure are measured at this time.';
COMMENT ON COLUMN reclaim.campaign_decisions.outcome IS 'offered (an offer row was signed), held_out (in the campaign''s control group: no offer, for measuring lift) or skipped (a rule said no; see reason).';
COMMENT ON COLUMN reclaim.campaign_decisions.reason IS 'Why, in words: which rule decided (e.g. "cooldown: last decided 2026-01-02, cooldown 90d").';
COMMENT ON COLUMN reclaim.campaign_decisions.variant_id IS 'For offered: the campaign variant whose offer was issued (an experiment''s arm); NULL for a campaign without variants, and for held out and skipped.';
COMMENT ON COLUMN reclaim.campaign_decisions.decided_at IS 'When the worker decided.';
COMMENT ON COLUMN reclaim.campaign_decisions.apple_win_back_listed IS 'Whether Apple listed win-back offers for the subscriber when decided (renewal info''s eligibleWinBackOfferIds not empty): a campaign that stands aside for them skipped (standing aside), one with standAsideForWinBack: false decided beside them. NULL for decisions before schema 31.';

CREATE TABLE reclaim.cancel_sheet_decisions (
    id                      uuid        PRIMARY KEY,
    campaign_id             text        NOT NULL,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    request_identifier      text        NOT NULL,
    product_id              text        NOT NULL,
    outcome                 text        NOT NULL CHECK (outcome IN ('answered', 'held_out', 'held_back', 'too_late')),
    shadow                  boolean     NOT NULL,
    variant_id              text,
    answer                  text        NOT NULL CHECK (answer IN ('nothing', 'message', 'alternate_product', 'promotional_offer')),
    message_identifier      text,
    answer_product_id       text,
    offer_identifier        text,
    repeat_of               uuid        REFERENCES reclaim.cancel_sheet_decisions (id),
    reason                  text        NOT NULL,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    CHECK (outcome IN ('answered', 'held_back', 'too_late') OR (variant_id IS NULL AND answer = 'nothing')),
    save_window             interval    NOT NULL DEFAULT interval '30 days',
    save_outcome            text        CHECK (save_outcome IN ('saved', 'lost', 'unknown')),
    saved_product_id        text,
    settled_at              timestamptz,
    follows                 uuid,
    billing_plan_type       text
);
CREATE INDEX cancel_sheet_decisions_subscriber_idx ON reclaim.cancel_sheet_decisions (bundle_id, environment, original_transaction_id, decided_at) WHERE repeat_of IS NULL;
CREATE INDEX cancel_sheet_decisions_campaign_idx ON reclaim.cancel_sheet_decisions (campaign_id, decided_at);
CREATE INDEX cancel_sheet_decisions_unsettled_idx ON reclaim.cancel_sheet_decisions (decided_at) WHERE settled_at IS NULL AND repeat_of IS NULL;
-- A replayed realtime request (the same requestIdentifier) is answered from its recorded decision.
CREATE INDEX cancel_sheet_decisions_request_idx ON reclaim.cancel_sheet_decisions (request_identifier);
-- One record per realtime request: a request and its replay arriving together record one decision (schema version 29).
CREATE UNIQUE INDEX cancel_sheet_decisions_one_per_request_idx
    ON reclaim.cancel_sheet_decisions (request_identifier, bundle_id, environment, original_transaction_id);
CREATE UNIQUE INDEX cancel_sheet_decisions_first_idx ON reclaim.cancel_sheet_decisions (bundle_id, environment, original_transaction_id, campaign_id, follows) WHERE repeat_of IS NULL AND follows IS NOT NULL;
COMMENT ON TABLE reclaim.cancel_sheet_decisions IS 'Every answer a cancel-sheet campaign (trigger RETENTION_MESSAGING) gave Apple''s Retention Messaging realtime request, or would have given (shadow): the campaign, the arm or the holdout, and the answer. A request within the campaign''s cooldown of an earlier decision repeats it (repeat_of); first decisions are the unit of the campaign''s statistics.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.id IS 'Decision id.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.campaign_id IS 'The cancel-sheet campaign (reclaim.campaigns.id).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.bundle_id IS 'The app (the configured one with the request''s appAppleId).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.environment IS 'Sandbox or Production, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.original_transaction_id IS 'The subscriber''s subscription, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.request_identifier IS 'Apple''s requestIdentifier (a UUID) of the realtime request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.product_id IS 'The subscription''s product when the subscriber opened the sheet, from the request.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.outcome IS 'answered (the arm''s answer), held_out (the control group: answered {}, so Apple''s own fallback ran), held_back (the arm''s promotional offer would have exceeded the app''s discountBudget: answered {}; the answer columns say what was held back, reason says why) or too_late (the arm''s answer was decided and recorded but did not leave within server.retentionBudgetMilliseconds: Apple got {}; the answer columns say what it would have been; counted in no arm).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.shadow IS 'The campaign was in shadow mode: the answer columns say what it would have answered; Apple was answered {}.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.variant_id IS 'The arm; NULL for held_out and for a campaign without variants.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.answer IS 'The key of Apple''s RealtimeResponseBody answered (or, for shadow, that would have been): message, alternate_product, promotional_offer; nothing for held_out.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.message_identifier IS 'The messageIdentifier answered; NULL for nothing.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.answer_product_id IS 'alternate_product: the product to switch to; promotional_offer: the offer''s product; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.offer_identifier IS 'promotional_offer: the offer identifier signed; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.repeat_of IS 'The first decision this request repeated (within the campaign''s cooldown); NULL for a first decision.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.reason IS 'Why, in words (e.g. "held out: bucket 312 of 10000 is in the 10% control group").';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.decided_at IS 'When the request was answered.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.save_window IS 'The campaign''s saveWindow when it decided: the outcome is settled this long after decided_at.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.save_outcome IS 'First decisions, once settled at the window''s end: saved (the answered offer redeemed in the window, a renewal in the window, or auto-renew on at its end), lost (auto-renew off, or expired, revoked or refunded), unknown (Reclaim has no state of the subscription). NULL until settled, and for repeats.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.saved_product_id IS 'For saved with auto-renew on: the product it renews to (a switch-plan save counts the product moved to).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.settled_at IS 'When the worker settled save_outcome (at or soon after decided_at + save_window); final from then on.';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.follows IS 'For a first decision: the campaign''s previous first decision for the subscriber (00000000-0000-0000-0000-000000000001 when none). Unique with the subscriber and campaign: of concurrent requests that decided after the same decision, one is recorded first and the others repeat it. NULL for repeats, and for first decisions a binary older than schema 18 wrote after the upgrade.';

CREATE TABLE reclaim.cancel_flow_decisions (
    id                      uuid        PRIMARY KEY,
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    survey_reason           text,
    can_show                text[]      NOT NULL,
    campaign_id             text,
    outcome                 text        NOT NULL CHECK (outcome IN ('answered', 'held_out', 'held_back', 'none')),
    variant_id              text,
    answer                  text        NOT NULL CHECK (answer IN ('nothing', 'offer', 'message', 'switch')),
    message                 text,
    answer_product_id       text,
    offer_identifier        text,
    repeat_of               uuid        REFERENCES reclaim.cancel_flow_decisions (id),
    follows                 uuid,
    reason                  text        NOT NULL,
    save_window             interval    NOT NULL,
    billing_plan_type       text,
    decided_at              timestamptz NOT NULL DEFAULT now(),
    CHECK ((campaign_id IS NULL) = (outcome = 'none')),
    CHECK (outcome IN ('answered', 'held_back') OR answer = 'nothing')
);
CREATE INDEX cancel_flow_decisions_subscriber_idx ON reclaim.cancel_flow_decisions (bundle_id, environment, original_transaction_id, decided_at);
CREATE INDEX cancel_flow_decisions_campaign_idx ON reclaim.cancel_flow_decisions (campaign_id, decided_at);
CREATE UNIQUE INDEX cancel_flow_decisions_first_idx ON reclaim.cancel_flow_decisions (bundle_id, environment, original_transaction_id, campaign_id, follows)
    WHERE repeat_of IS NULL AND follows IS NOT NULL;
COMMENT ON TABLE reclaim.cancel_flow_decisions IS 'Every cancel intent the app sent (POST /v1/cancel-flow): the subscriber tapped "Cancel subscription" in the app and may have said why; the cancel-flow campaign (trigger CANCEL_FLOW) that decided, the arm or the holdout, and what the app was answered. A request within the campaign''s cooldown of an earlier decision repeats it (repeat_of); first decisions are the unit of the save rates (reclaim.cancel_flow_save_rates).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.id IS 'The flow''s id (flowId in the answer; the app records its steps with it in reclaim.cancel_flow_events).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.bundle_id IS 'The app (the app key''s).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.environment IS 'Sandbox or Production: the subscription''s.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.original_transaction_id IS 'The subscriber''s subscription (named by its appAccountToken or proven by a signed transaction).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.survey_reason IS 'The survey answer the subscriber chose (one of apps[].cancelReasons); NULL for no answer.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.can_show IS 'What the app said it can show: offer, message, switch.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.campaign_id IS 'The cancel-flow campaign that decided (reclaim.campaigns.id); NULL when none did (outcome none).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.outcome IS 'answered (the arm''s answer), held_out (the control group: nothing shown), held_back (the arm''s offer would have exceeded the app''s discountBudget: nothing shown; the answer columns say what was held back) or none (no campaign answered: reason says why).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.variant_id IS 'The arm; NULL for held_out, none and a campaign without variants.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.answer IS 'What the app was answered (held_back: would have been): offer (a promotional offer, then the subscriber''s live offer in reclaim.offers), message, switch, or nothing.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.message IS 'message: the key the app words its message by; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.answer_product_id IS 'switch: the product to move to; offer: the offer''s product; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.offer_identifier IS 'offer: the promotional offer identifier signed; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.repeat_of IS 'The first decision this request repeated (within the campaign''s cooldown); NULL for a first decision.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.follows IS 'For a first decision: the campaign''s previous first decision for the subscriber (00000000-0000-0000-0000-000000000001 when none); unique with the subscriber and campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.reason IS 'Why, in words (e.g. "held out: bucket 312 of 10000 is in the 10% control group", or why no campaign answered).';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.save_window IS 'The campaign''s saveWindow when it decided: saved unless auto-renew was turned off or a refund followed within it.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.billing_plan_type IS 'The subscription''s billingPlanType (MONTHLY, BILLED_UPFRONT) when it decided; NULL when unknown.';
COMMENT ON COLUMN reclaim.cancel_flow_decisions.decided_at IS 'When the app was answered.';

CREATE TABLE reclaim.cancel_flow_events (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    flow_id     uuid        REFERENCES reclaim.cancel_flow_decisions (id) ON DELETE CASCADE,
    bundle_id   text        NOT NULL,
    step        text        NOT NULL CHECK (step IN ('survey_skipped', 'answer_shown', 'accepted', 'declined', 'purchased', 'purchase_pending',
                                                     'purchase_failed', 'manage_opened', 'refund_opened', 'fallback_opened')),
    error       text        CHECK (char_length(error) <= 500),
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cancel_flow_events_flow_idx ON reclaim.cancel_flow_events (flow_id, at);
CREATE INDEX cancel_flow_events_step_idx ON reclaim.cancel_flow_events (bundle_id, step, at);
COMMENT ON TABLE reclaim.cancel_flow_events IS 'The steps of the app''s cancel flows as ReclaimClient records them (POST /v1/cancel-flow/events): what was shown, accepted or declined, and which of Apple''s sheets opened. The funnel only: the save rates come from Apple''s notifications.';
COMMENT ON COLUMN reclaim.cancel_flow_events.id IS 'Event id.';
COMMENT ON COLUMN reclaim.cancel_flow_events.flow_id IS 'The flow (reclaim.cancel_flow_decisions.id); NULL for survey_skipped before a flow started.';
COMMENT ON COLUMN reclaim.cancel_flow_events.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_events.step IS 'survey_skipped, answer_shown, accepted, declined, purchased, purchase_pending, purchase_failed, manage_opened (Apple''s manage-subscriptions sheet), refund_opened (Apple''s refund request sheet), fallback_opened (where Apple declares no such sheet: the subscriptions page).';
COMMENT ON COLUMN reclaim.cancel_flow_events.error IS 'purchase_failed: the error, as the app described it; NULL otherwise.';
COMMENT ON COLUMN reclaim.cancel_flow_events.at IS 'When Reclaim received it.';

CREATE TABLE reclaim.offers (
    id                       uuid        PRIMARY KEY,
    decision_id              uuid        UNIQUE REFERENCES reclaim.campaign_decisions (id),
    grant_id                 uuid        REFERENCES reclaim.grants (id),
    bundle_id                text        NOT NULL,
    environment              text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    app_account_token        uuid,
    campaign_id              text        NOT NULL,
    source_notification_uuid uuid        REFERENCES reclaim.notifications (notification_uuid),
    triggered_at             timestamptz NOT NULL,
    priority                 integer     NOT NULL,
    product_id               text        NOT NULL,
    offer_identifier         text        NOT NULL,
    state                    text        NOT NULL DEFAULT 'ready'
                                         CHECK (state IN ('ready', 'delivered', 'redeemed', 'withdrawn', 'expired')),
    key_id                   text        NOT NULL,
    nonce                    uuid        NOT NULL,
    signed_at                timestamptz NOT NULL,
    application_username     text        NOT NULL,
    storekit1_signature      text        NOT NULL,
    storekit2_jws            text        NOT NULL,
    signature_delivered      boolean     NOT NULL DEFAULT false,
    deliverable_until        timestamptz NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT now(),
    delivered_at             timestamptz,
    delivery_count           integer     NOT NULL DEFAULT 0,
    redeemed_at              timestamptz,
    redeemed_transaction_id  text,
    redeemed_price           bigint,
    redeemed_currency        text,
    ended_at                 timestamptz,
    end_reason               text,
    variant_id               text,
    cancel_flow_decision_id  uuid        REFERENCES reclaim.cancel_flow_decisions (id),
    CHECK (decision_id IS NOT NULL OR grant_id IS NOT NULL OR cancel_flow_decision_id IS NOT NULL)
);
-- Apple lets a subscriber have one offer at a time: the database refuses a second live one.
CREATE UNIQUE INDEX offers_one_live_idx ON reclaim.offers (bundle_id, environment, original_transaction_id) WHERE state IN ('ready', 'delivered');
-- app_account_token first: a query for one subscriber (bundle, environment, originalTransactionId) must
-- not find this index attractive, which it did on a table without statistics yet (a scan of the whole app).
CREATE INDEX offers_deliverable_idx ON reclaim.offers (app_account_token, bundle_id) WHERE state IN ('ready', 'delivered');
-- The refresher and the expiry sweep read these in order and stop at the first row not due: no full scan.
CREATE INDEX offers_refresh_idx ON reclaim.offers (signed_at) WHERE state IN ('ready', 'delivered');
CREATE INDEX offers_expiry_idx ON reclaim.offers (deliverable_until) WHERE state IN ('ready', 'delivered');
CREATE INDEX offers_subscriber_idx ON reclaim.offers (bundle_id, environment, original_transaction_id, created_at);
CREATE INDEX offers_created_idx ON reclaim.offers (created_at);
COMMENT ON TABLE reclaim.offers IS 'Every offer issued to a subscriber, by a campaign decision or a grant, with its pre-generated signatures. At most one live (ready or delivered) offer per subscriber.';
COMMENT ON COLUMN reclaim.offers.id IS 'Offer id, as the app sees it.';
COMMENT ON COLUMN reclaim.offers.decision_id IS 'The campaign decision that issued it (NULL for grants).';
COMMENT ON COLUMN reclaim.offers.grant_id IS 'Set when the offer comes from an admin grant.';
COMMENT ON COLUMN reclaim.offers.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offers.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.offers.original_transaction_id IS 'The subscriber''s subscription.';
COMMENT ON COLUMN reclaim.offers.app_account_token IS 'The subscriber''s app user id; GET /v1/offers looks offers up by it. NULL: the app never set one, so the offer cannot be fetched by token.';
COMMENT ON COLUMN reclaim.offers.campaign_id IS 'The campaign (or grant campaign label) that produced the offer.';
COMMENT ON COLUMN reclaim.offers.source_notification_uuid IS 'The notification that triggered the campaign.';
COMMENT ON COLUMN reclaim.offers.triggered_at IS 'signedDate of the triggering notification (or the grant time).';
COMMENT ON COLUMN reclaim.offers.priority IS 'The campaign''s priority when issued: a later decision of higher priority withdraws this offer.';
COMMENT ON COLUMN reclaim.offers.product_id IS 'Product the offer applies to.';
COMMENT ON COLUMN reclaim.offers.offer_identifier IS 'Promotional offer id in App Store Connect.';
COMMENT ON COLUMN reclaim.offers.state IS 'ready (signed, not yet fetched), delivered (handed to the app at least once), redeemed (Apple reported the purchase), withdrawn (superseded, or the subscriber came back without it; see end_reason), expired (deliverable_until passed).';
COMMENT ON COLUMN reclaim.offers.key_id IS 'Id of the App Store Connect subscription key that made the stored signatures (never the key itself).';
COMMENT ON COLUMN reclaim.offers.nonce IS 'Nonce of the stored signatures.';
COMMENT ON COLUMN reclaim.offers.signed_at IS 'Timestamp of the stored signatures. Apple accepts a signature for 24 hours; the refresher re-signs long before that.';
COMMENT ON COLUMN reclaim.offers.application_username IS 'applicationUsername in the StoreKit 1 signature: the lowercase appAccountToken, or empty.';
COMMENT ON COLUMN reclaim.offers.storekit1_signature IS 'Base64 DER ECDSA signature for SKPaymentDiscount / promotionalOffer(offerID:keyID:nonce:signature:timestamp:).';
COMMENT ON COLUMN reclaim.offers.storekit2_jws IS 'Compact JWS for StoreKit 2 promotionalOffer(_:compactJWS:).';
COMMENT ON COLUMN reclaim.offers.signature_delivered IS 'Whether the stored signatures were handed out; each signature (nonce) is handed out at most once, later deliveries are signed anew.';
COMMENT ON COLUMN reclaim.offers.deliverable_until IS 'After this the offer is no longer handed out (triggered_at plus the campaign''s deliverableFor).';
COMMENT ON COLUMN reclaim.offers.created_at IS 'When the offer was issued.';
COMMENT ON COLUMN reclaim.offers.delivered_at IS 'First time the app fetched it.';
COMMENT ON COLUMN reclaim.offers.delivery_count IS 'How many times the app fetched it.';
COMMENT ON COLUMN reclaim.offers.redeemed_at IS 'When the redeeming purchase was made (transaction purchaseDate).';
COMMENT ON COLUMN reclaim.offers.redeemed_transaction_id IS 'The transaction that redeemed it.';
COMMENT ON COLUMN reclaim.offers.redeemed_price IS 'Price paid, in milli-units of redeemed_currency (Apple''s transaction price).';
COMMENT ON COLUMN reclaim.offers.redeemed_currency IS 'ISO 4217 currency of the redeeming transaction.';
COMMENT ON COLUMN reclaim.offers.ended_at IS 'When it left the live states (redeemed, withdrawn or expired).';
COMMENT ON COLUMN reclaim.offers.end_reason IS 'Why it was withdrawn or expired, in words.';
COMMENT ON COLUMN reclaim.offers.variant_id IS 'The campaign variant it offers; NULL for a campaign without variants, and for grants.';
COMMENT ON COLUMN reclaim.offers.cancel_flow_decision_id IS 'The cancel-flow decision that issued it (an offer answered to the app''s cancel flow); NULL for a campaign''s or a grant''s.';

CREATE TABLE reclaim.offer_redemptions (
    notification_uuid       uuid        PRIMARY KEY REFERENCES reclaim.notifications (notification_uuid),
    bundle_id               text        NOT NULL,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    transaction_id          text,
    product_id              text,
    offer_identifier        text        NOT NULL,
    offer_id                uuid        REFERENCES reclaim.offers (id),
    price                   bigint,
    currency                text,
    redeemed_at             timestamptz NOT NULL,
    recorded_at             timestamptz NOT NULL DEFAULT now(),
    offer_type              smallint    NOT NULL DEFAULT 2,
    offer_period            text,
    code_decision_id        uuid
);
CREATE INDEX offer_redemptions_redeemed_idx ON reclaim.offer_redemptions (redeemed_at);
CREATE INDEX offer_redemptions_subscriber_idx ON reclaim.offer_redemptions (bundle_id, environment, original_transaction_id, redeemed_at);
COMMENT ON TABLE reclaim.offer_redemptions IS 'Every discounted purchase Apple reported (OFFER_REDEEMED, SUBSCRIBED or DID_RENEW whose transaction has an offerType other than 1, introductory), through every door: Reclaim''s promotional offers (offer_id set), promotional offers signed elsewhere, offer codes, Apple''s win-back offers, App Store Connect''s retention offers, and types Apple adds later. Rows before schema 17 are promotional offers only.';
COMMENT ON COLUMN reclaim.offer_redemptions.notification_uuid IS 'The notification that reported it.';
COMMENT ON COLUMN reclaim.offer_redemptions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_redemptions.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.offer_redemptions.original_transaction_id IS 'The subscriber''s subscription.';
COMMENT ON COLUMN reclaim.offer_redemptions.transaction_id IS 'The redeeming transaction.';
COMMENT ON COLUMN reclaim.offer_redemptions.product_id IS 'The product bought.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_identifier IS 'The offer identifier the transaction carries ('''' when Apple sent none).';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_id IS 'The Reclaim offer it redeemed; NULL when Reclaim never issued that offer to this subscriber (e.g. the app signed one elsewhere).';
COMMENT ON COLUMN reclaim.offer_redemptions.price IS 'Price paid in milli-units of currency.';
COMMENT ON COLUMN reclaim.offer_redemptions.currency IS 'ISO 4217 currency.';
COMMENT ON COLUMN reclaim.offer_redemptions.redeemed_at IS 'Transaction purchaseDate (the notification''s signedDate when absent).';
COMMENT ON COLUMN reclaim.offer_redemptions.recorded_at IS 'When Reclaim recorded it.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_type IS 'Apple''s offerType: 2 promotional, 3 offer code, 4 win-back, 5 App Store Connect retention offer (named at WWDC26; not in Apple''s offerType reference as read for this release), any other value as Apple sent it.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_period IS 'Apple''s offerPeriod (ISO 8601 duration, e.g. P1M) when the transaction carries one.';
COMMENT ON COLUMN reclaim.offer_redemptions.code_decision_id IS 'offerType 3 of a pool''s offer (reclaim.offer_code_pools): the decision whose code the subscriber was given, the redemption inferred from it (Apple names the offer, not the code); NULL when Reclaim gave this subscriber no code of the offer.';

CREATE TABLE reclaim.offer_events (
    offer_id       uuid        NOT NULL REFERENCES reclaim.offers (id),
    event          text        NOT NULL,
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    purchase_error text,
    PRIMARY KEY (offer_id, event),
    CONSTRAINT offer_events_event_check
        CHECK (event IN ('shown', 'dismissed', 'purchase_started', 'purchase_pending', 'purchase_failed')),
    CONSTRAINT offer_events_purchase_error_check
        CHECK (purchase_error IS NULL OR (event = 'purchase_failed' AND char_length(purchase_error) BETWEEN 1 AND 256))
);
COMMENT ON TABLE reclaim.offer_events IS 'What the app reported about an offer (POST /v1/offers/{id}/events); each event once per offer.';
COMMENT ON COLUMN reclaim.offer_events.offer_id IS 'The offer.';
COMMENT ON COLUMN reclaim.offer_events.event IS 'shown, dismissed, purchase_started, purchase_pending (Ask to Buy: awaiting approval) or purchase_failed.';
COMMENT ON COLUMN reclaim.offer_events.occurred_at IS 'When Reclaim first recorded it.';
COMMENT ON COLUMN reclaim.offer_events.purchase_error IS 'purchase_failed only: the error StoreKit threw, as the app described it (at most 256 characters); NULL when the app sent none.';

CREATE TABLE reclaim.offer_code_pools (
    bundle_id            text        NOT NULL,
    environment          text        NOT NULL,
    offer_reference_name text        NOT NULL,
    product_id           text        NOT NULL,
    eligibility          text[]      NOT NULL CHECK (cardinality(eligibility) > 0 AND eligibility <@ ARRAY['new', 'existing', 'expired']),
    redemption_url       text        NOT NULL CHECK (strpos(redemption_url, '{code}') > 0),
    created_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, environment, offer_reference_name)
);
COMMENT ON TABLE reclaim.offer_code_pools IS 'One-time-use offer codes of an App Store Connect offer-code offer, per app and environment (reclaim codes import): what campaigns with offer.offerCodes hand out, one code per offered decision.';
COMMENT ON COLUMN reclaim.offer_code_pools.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_code_pools.environment IS 'Sandbox or Production: the subscribers whose decisions take codes of this pool.';
COMMENT ON COLUMN reclaim.offer_code_pools.offer_reference_name IS 'The offer''s reference name in App Store Connect: the offerIdentifier of a transaction that redeems one of its codes (offerType 3), and the name campaigns give in offer.offerCodes.';
COMMENT ON COLUMN reclaim.offer_code_pools.product_id IS 'The subscription product of the offer.';
COMMENT ON COLUMN reclaim.offer_code_pools.eligibility IS 'The offer''s customer eligibilities in App Store Connect (App Store Connect API SubscriptionCustomerEligibility: NEW, EXISTING, EXPIRED), lower case. reclaim campaigns check refuses a campaign whose trigger reaches subscribers none of them admits.';
COMMENT ON COLUMN reclaim.offer_code_pools.redemption_url IS 'The redemption URL of a code, {code} standing for the code (default https://apps.apple.com/redeem?ctx=offercodes&id=<appAppleId>&code={code}).';
COMMENT ON COLUMN reclaim.offer_code_pools.created_at IS 'When the pool was first imported.';

CREATE TABLE reclaim.offer_codes (
    code                         text        PRIMARY KEY,
    bundle_id                    text        NOT NULL,
    environment                  text        NOT NULL,
    offer_reference_name         text        NOT NULL,
    expires_at                   timestamptz NOT NULL,
    imported_at                  timestamptz NOT NULL DEFAULT now(),
    decision_id                  uuid        UNIQUE REFERENCES reclaim.campaign_decisions (id),
    original_transaction_id      text,
    issued_at                    timestamptz,
    redeemed_at                  timestamptz,
    redemption_notification_uuid uuid,
    app_account_token            uuid,
    deliverable_until            timestamptz,
    delivered_at                 timestamptz,
    FOREIGN KEY (bundle_id, environment, offer_reference_name) REFERENCES reclaim.offer_code_pools (bundle_id, environment, offer_reference_name),
    CHECK ((decision_id IS NULL) = (issued_at IS NULL)),
    CHECK (redeemed_at IS NULL OR decision_id IS NOT NULL)
);
-- Each offered decision takes the unused code that expires first: this index finds it without a scan.
CREATE INDEX offer_codes_unused_idx ON reclaim.offer_codes (bundle_id, environment, offer_reference_name, expires_at) WHERE decision_id IS NULL;
CREATE INDEX offer_codes_subscriber_idx ON reclaim.offer_codes (bundle_id, environment, original_transaction_id) WHERE decision_id IS NOT NULL;
-- GET /v1/offers?include=offerCodes: an app user's codes not yet redeemed.
CREATE INDEX offer_codes_app_user_idx ON reclaim.offer_codes (app_account_token, bundle_id) WHERE decision_id IS NOT NULL AND redeemed_at IS NULL;
COMMENT ON TABLE reclaim.offer_codes IS 'Every imported one-time-use offer code: unused (decision_id NULL), issued to one subscriber by one offered decision, or redeemed. Codes are bearer secrets: shown to admin keys and sent to the app''s webhooks only; forget replaces an issued code by its hash.';
COMMENT ON COLUMN reclaim.offer_codes.code IS 'The code as App Store Connect exported it, upper case; unique across every pool. forgotten:<sha-256 hex> once its subscriber was forgotten.';
COMMENT ON COLUMN reclaim.offer_codes.bundle_id IS 'The pool''s app.';
COMMENT ON COLUMN reclaim.offer_codes.environment IS 'The pool''s environment.';
COMMENT ON COLUMN reclaim.offer_codes.offer_reference_name IS 'The pool''s offer reference name.';
COMMENT ON COLUMN reclaim.offer_codes.expires_at IS 'When the code expires (reclaim codes import --expires; Apple''s one-time-use codes expire at most six months after they are made). A code is taken only when it stays valid through the decision''s delivery window (the campaign''s deliverableFor).';
COMMENT ON COLUMN reclaim.offer_codes.imported_at IS 'When it was imported.';
COMMENT ON COLUMN reclaim.offer_codes.decision_id IS 'The offered campaign decision it was issued for; NULL while unused.';
COMMENT ON COLUMN reclaim.offer_codes.original_transaction_id IS 'The subscriber it was issued to (one code of an offer per subscriber: Apple lets each customer redeem one code per offer).';
COMMENT ON COLUMN reclaim.offer_codes.issued_at IS 'When it was issued.';
COMMENT ON COLUMN reclaim.offer_codes.redeemed_at IS 'When the subscriber redeemed the offer (the transaction''s purchaseDate). Inferred: Apple''s transaction names the offer, not the code, and this is the one code of the offer the subscriber was given.';
COMMENT ON COLUMN reclaim.offer_codes.redemption_notification_uuid IS 'The notification that reported the redemption.';
COMMENT ON COLUMN reclaim.offer_codes.app_account_token IS 'The subscriber''s app user id when issued, if known: GET /v1/offers?include=offerCodes finds the code by it.';
COMMENT ON COLUMN reclaim.offer_codes.deliverable_until IS 'The decision''s delivery window (its trigger plus the campaign''s deliverableFor): the app is handed the code until then, or until it expires or is redeemed.';
COMMENT ON COLUMN reclaim.offer_codes.delivered_at IS 'First time an app that asks for offer codes (ReclaimClient 2.1 and later) fetched it.';

CREATE TABLE reclaim.offer_code_events (
    decision_id    uuid        NOT NULL REFERENCES reclaim.campaign_decisions (id),
    event          text        NOT NULL CHECK (event IN ('shown', 'dismissed', 'purchase_started', 'purchase_pending', 'purchase_failed')),
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    purchase_error text        CHECK (purchase_error IS NULL OR (event = 'purchase_failed' AND char_length(purchase_error) BETWEEN 1 AND 256)),
    PRIMARY KEY (decision_id, event)
);
COMMENT ON TABLE reclaim.offer_code_events IS 'What the app reported about an offer code it was handed (POST /v1/offers/{id}/events with the code''s id, its decision''s); each event once per code.';
COMMENT ON COLUMN reclaim.offer_code_events.decision_id IS 'The decision that issued the code (reclaim.offer_codes.decision_id).';
COMMENT ON COLUMN reclaim.offer_code_events.event IS 'shown, dismissed, purchase_started (the app opened Apple''s redemption sheet or the redemption URL), purchase_pending or purchase_failed (the sheet failed).';
COMMENT ON COLUMN reclaim.offer_code_events.occurred_at IS 'When Reclaim first recorded it.';
COMMENT ON COLUMN reclaim.offer_code_events.purchase_error IS 'purchase_failed only: the error StoreKit threw, as the app described it (at most 256 characters).';

-- ---------------------------------------------------------------------------------------------
-- API keys and forensics.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.api_keys (
    id          uuid        PRIMARY KEY,
    scope       text        NOT NULL CHECK (scope IN ('app', 'admin', 'console', 'support', 'privacy')),
    bundle_id   text,
    key_hash    bytea       NOT NULL UNIQUE,
    key_prefix  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    name        text,
    console_sessions_not_before timestamptz,
    CHECK (scope IN ('console', 'support', 'privacy') OR (scope = 'app') = (bundle_id IS NOT NULL))
);
COMMENT ON TABLE reclaim.api_keys IS 'Keys for the delivery API (scope app, bound to one bundle id), the admin API and console (scope admin), the read-only console (scope console), support (one subscriber''s story and the reports) and privacy (the story and the erasure); console, support and privacy keys are of one app or, without a bundle id, all. Only a SHA-256 of each key is stored.';
COMMENT ON COLUMN reclaim.api_keys.id IS 'Key id.';
COMMENT ON COLUMN reclaim.api_keys.scope IS 'The key''s role: app (delivery API), admin (admin API and /console, every app), console (/console''s counts only), support (/console and one subscriber''s story), privacy (the story and the erasure).';
COMMENT ON COLUMN reclaim.api_keys.bundle_id IS 'For app keys, and console, support and privacy keys of one app: the only app whose data the key can read. NULL for admin keys and for console, support and privacy keys of every app.';
COMMENT ON COLUMN reclaim.api_keys.key_hash IS 'SHA-256 of the key; the key itself is shown once, at creation.';
COMMENT ON COLUMN reclaim.api_keys.key_prefix IS 'First characters of the key, to recognise it in lists.';
COMMENT ON COLUMN reclaim.api_keys.created_at IS 'When the key was created.';
COMMENT ON COLUMN reclaim.api_keys.revoked_at IS 'Set when the key was revoked; a revoked key is refused.';
COMMENT ON COLUMN reclaim.api_keys.name IS 'What the operator called the key when creating it (e.g. ios-production), to tell keys apart.';
COMMENT ON COLUMN reclaim.api_keys.console_sessions_not_before IS '/console sessions of this key signed in before this time are ended: signing out moves it past the session that signed out, so a copied cookie stops working. NULL: no sign-out yet.';

CREATE TABLE reclaim.rejected_inputs (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now(),
    endpoint    text        NOT NULL,
    problem     text        NOT NULL,
    reason      text        NOT NULL,
    body_sha256 bytea       NOT NULL,
    body_size   integer     NOT NULL,
    claimed_bundle_id text
);
CREATE INDEX rejected_inputs_received_idx ON reclaim.rejected_inputs (received_at);
COMMENT ON TABLE reclaim.rejected_inputs IS 'Forensics: inputs refused at the edge (forged, malformed, unknown app). Only a hash of the body is kept, never the body. Pruned to the newest rows.';
COMMENT ON COLUMN reclaim.rejected_inputs.id IS 'Row id.';
COMMENT ON COLUMN reclaim.rejected_inputs.received_at IS 'When it was refused.';
COMMENT ON COLUMN reclaim.rejected_inputs.endpoint IS 'The HTTP route.';
COMMENT ON COLUMN reclaim.rejected_inputs.problem IS 'The problem+json type slug, e.g. invalid-signature.';
COMMENT ON COLUMN reclaim.rejected_inputs.reason IS 'Human-readable reason.';
COMMENT ON COLUMN reclaim.rejected_inputs.body_sha256 IS 'SHA-256 of the request body, to match against Apple''s notification history.';
COMMENT ON COLUMN reclaim.rejected_inputs.body_size IS 'Body size in bytes.';
COMMENT ON COLUMN reclaim.rejected_inputs.claimed_bundle_id IS 'The configured app a refused notification''s unverified payload names (so the app''s notification.refused webhook hears of it); NULL when it names none, or another.';

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
    synced_at    timestamptz NOT NULL DEFAULT now(),
    forward_forgotten boolean NOT NULL DEFAULT true
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
COMMENT ON COLUMN reclaim.outbound_targets.forward_forgotten IS 'For forwarding: whether notifications about subscribers forgotten on request (reclaim subscribers forget) go there, their complete body, kept only until sent (true), or none of them (false). apps[].forwarding[].forwardForgotten.';

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

CREATE FUNCTION reclaim.offer_webhook_data(o reclaim.offers) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'offerId', o.id, 'bundleId', o.bundle_id, 'environment', o.environment,
        'originalTransactionId', o.original_transaction_id, 'appAccountToken', o.app_account_token,
        'campaignId', o.campaign_id, 'variantId', o.variant_id, 'grantId', o.grant_id,
        'productId', o.product_id, 'offerIdentifier', o.offer_identifier, 'state', o.state,
        'createdAt', reclaim.iso8601(o.created_at), 'deliverableUntil', reclaim.iso8601(o.deliverable_until),
        'deliveredAt', reclaim.iso8601(o.delivered_at), 'endedAt', reclaim.iso8601(o.ended_at), 'endReason', o.end_reason,
        'redeemedAt', reclaim.iso8601(o.redeemed_at), 'redeemedTransactionId', o.redeemed_transaction_id,
        'redeemedPrice', o.redeemed_price, 'redeemedCurrency', o.redeemed_currency))
$$;
COMMENT ON FUNCTION reclaim.offer_webhook_data(reclaim.offers) IS 'The data of every offer.* webhook event: the offer as it is after the change.';

-- offer.issued, for a whole statement's offers at once (a batch of subscribers' offers is one INSERT): one set-based
-- insert of jobs, where a row trigger ran the event's statements once per offer (20,000 offers with one webhook:
-- 7.1-9.2 s became 2.5 s, the insert alone 1.0-1.4 s; docs/decisions/0004).
CREATE FUNCTION reclaim.offers_issued_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO reclaim.jobs (kind, target, payload, max_attempts)
    SELECT 'webhook', t.id,
           jsonb_build_object('webhookId', 'msg_' || replace(gen_random_uuid()::text, '-', ''),
                              'event', jsonb_build_object('type', 'offer.issued', 'timestamp', reclaim.iso8601(now()),
                                                         'data', reclaim.offer_webhook_data(n))),
           1000000
    FROM new_offers n
    JOIN reclaim.outbound_targets t ON t.kind = 'webhook' AND t.bundle_id = n.bundle_id AND 'offer.issued' = ANY (t.events)
                                   AND n.environment = ANY (t.environments);
    IF FOUND THEN PERFORM pg_notify('reclaim_outbound', ''); END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.offers_issued_webhooks() IS 'offer.issued for every offer an INSERT wrote (statement-level, over its transition table new_offers).';
CREATE TRIGGER offers_issued_webhooks AFTER INSERT ON reclaim.offers REFERENCING NEW TABLE AS new_offers
    FOR EACH STATEMENT EXECUTE FUNCTION reclaim.offers_issued_webhooks();

CREATE FUNCTION reclaim.offer_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Most apps have no webhooks: one probe of a small table, nothing built.
    IF NOT EXISTS (SELECT 1 FROM reclaim.outbound_targets t WHERE t.bundle_id = NEW.bundle_id AND t.kind = 'webhook') THEN
        RETURN NULL;
    END IF;
    PERFORM reclaim.enqueue_webhooks('offer.' || NEW.state, NEW.bundle_id, NEW.environment, reclaim.offer_webhook_data(NEW));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.offer_webhooks() IS 'offer.delivered (the first delivery), offer.redeemed, offer.withdrawn and offer.expired, from every statement that changes an offer''s state (a row trigger: a statement trigger cannot watch one column).';
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

CREATE FUNCTION reclaim.offer_code_webhooks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM reclaim.outbound_targets t WHERE t.bundle_id = NEW.bundle_id AND t.kind = 'webhook') THEN
        RETURN NULL;
    END IF;
    PERFORM reclaim.enqueue_webhooks('offer.issued', NEW.bundle_id, NEW.environment, (
        SELECT jsonb_strip_nulls(jsonb_build_object(
            'kind', 'offerCode', 'decisionId', d.id, 'bundleId', NEW.bundle_id, 'environment', NEW.environment,
            'originalTransactionId', NEW.original_transaction_id, 'appAccountToken', d.app_account_token,
            'campaignId', d.campaign_id, 'variantId', d.variant_id, 'productId', p.product_id,
            'offerIdentifier', NEW.offer_reference_name, 'offerCode', NEW.code,
            'redemptionUrl', replace(p.redemption_url, '{code}', NEW.code),
            'codeExpiresAt', reclaim.iso8601(NEW.expires_at), 'createdAt', reclaim.iso8601(NEW.issued_at)))
        FROM reclaim.campaign_decisions d
        JOIN reclaim.offer_code_pools p
          ON p.bundle_id = NEW.bundle_id AND p.environment = NEW.environment AND p.offer_reference_name = NEW.offer_reference_name
        WHERE d.id = NEW.decision_id));
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION reclaim.offer_code_webhooks() IS 'offer.issued for an offer code issued to a subscriber: its data has kind offerCode, the code and its redemption URL, and no offerId.';
CREATE TRIGGER offer_codes_issued_webhooks AFTER UPDATE OF decision_id ON reclaim.offer_codes
    FOR EACH ROW WHEN (OLD.decision_id IS NULL AND NEW.decision_id IS NOT NULL) EXECUTE FUNCTION reclaim.offer_code_webhooks();

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

-- ---------------------------------------------------------------------------------------------
-- Recovery through the App Store Server API: reconciliation runs and backfill progress.
-- ---------------------------------------------------------------------------------------------
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
    reason          text,
    evaluated_at    timestamptz,
    PRIMARY KEY (bundle_id, transaction_id)
);
COMMENT ON TABLE reclaim.backfill_transactions IS 'Transaction ids reclaim backfill has handled, so an interrupted backfill resumes where it stopped.';
COMMENT ON COLUMN reclaim.backfill_transactions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.backfill_transactions.transaction_id IS 'A transaction id from the backfill file.';
COMMENT ON COLUMN reclaim.backfill_transactions.environment IS 'Where Apple knew it (Production or Sandbox); NULL when in neither.';
COMMENT ON COLUMN reclaim.backfill_transactions.subscriptions IS 'Subscriptions whose state it seeded.';
COMMENT ON COLUMN reclaim.backfill_transactions.result IS 'seeded; not found (in no environment asked); invalid (not a transaction id: never sent to Apple); failed (reason says why; a later run tries it again).';
COMMENT ON COLUMN reclaim.backfill_transactions.done_at IS 'When it was handled.';
COMMENT ON COLUMN reclaim.backfill_transactions.reason IS 'Why an id was invalid or failed (verification, Apple''s error); NULL otherwise.';
COMMENT ON COLUMN reclaim.backfill_transactions.evaluated_at IS 'When the campaigns decided for its subscriptions (reclaim backfill --evaluate); NULL: imported only (or before schema 34).';

CREATE TABLE reclaim.backfill_answers (
    bundle_id                text        NOT NULL,
    transaction_id           text        NOT NULL,
    environment              text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    status                   integer,
    signed_transaction_info  text        NOT NULL,
    signed_renewal_info      text,
    imported_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, transaction_id, original_transaction_id)
);
COMMENT ON TABLE reclaim.backfill_answers IS 'Apple''s answer to Get All Subscription Statuses for each backfilled id, one row per subscription: what reclaim backfill --evaluate decides from without asking Apple again (--refresh asks again and replaces it).';
COMMENT ON COLUMN reclaim.backfill_answers.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.backfill_answers.transaction_id IS 'The id from the backfill file (reclaim.backfill_transactions).';
COMMENT ON COLUMN reclaim.backfill_answers.environment IS 'Where Apple knew it (Production or Sandbox).';
COMMENT ON COLUMN reclaim.backfill_answers.original_transaction_id IS 'One subscription of the answer.';
COMMENT ON COLUMN reclaim.backfill_answers.status IS 'Apple''s status then (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).';
COMMENT ON COLUMN reclaim.backfill_answers.signed_transaction_info IS 'Apple''s signed transaction (JWS), verified again before it is used.';
COMMENT ON COLUMN reclaim.backfill_answers.signed_renewal_info IS 'Apple''s signed renewal info (JWS), verified again before it is used.';
COMMENT ON COLUMN reclaim.backfill_answers.imported_at IS 'When Apple answered.';

-- The App Store Server API's rate budget, shared by every process (Sources/ReclaimService/AppStore/AppleAPIPacer.swift).
CREATE TABLE reclaim.apple_api_pace (
    bundle_id     text        NOT NULL,
    environment   text        NOT NULL,
    endpoint      text        NOT NULL,
    next_slot     timestamptz NOT NULL,
    paused_until  timestamptz,
    PRIMARY KEY (bundle_id, environment, endpoint)
);
COMMENT ON TABLE reclaim.apple_api_pace IS 'The App Store Server API rate budget every Reclaim process shares: per app, environment and endpoint, the next free request slot (slots are 1/rate apart, so all processes together send at most the rate in any second) and a pause that a 429 sets until its Retry-After. Rows are small and updated in place; reclaim reads nothing else from them.';
COMMENT ON COLUMN reclaim.apple_api_pace.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.apple_api_pace.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.apple_api_pace.endpoint IS 'The endpoint''s identifier, e.g. getAllSubscriptionStatuses (docs/configuration.md lists them).';
COMMENT ON COLUMN reclaim.apple_api_pace.next_slot IS 'When the next request may start: a process reserves a run of slots by moving it on.';
COMMENT ON COLUMN reclaim.apple_api_pace.paused_until IS 'Set from a 429''s Retry-After: no slot before it.';


-- ---------------------------------------------------------------------------------------------
-- Views for dashboards.
-- ---------------------------------------------------------------------------------------------
CREATE VIEW reclaim.queue_health AS
SELECT state,
       count(*)                                   AS jobs,
       min(run_at) FILTER (WHERE state IN ('available', 'retryable')) AS oldest_run_at,
       max(attempts)                              AS max_attempts_seen
FROM reclaim.jobs
GROUP BY state;
COMMENT ON VIEW reclaim.queue_health IS 'Jobs per state, the oldest waiting job and the most attempts seen: the queue at a glance.';
COMMENT ON COLUMN reclaim.queue_health.state IS 'Job state.';
COMMENT ON COLUMN reclaim.queue_health.jobs IS 'Number of jobs in that state.';
COMMENT ON COLUMN reclaim.queue_health.oldest_run_at IS 'For waiting states: run_at of the oldest job (now() minus this is the backlog age).';
COMMENT ON COLUMN reclaim.queue_health.max_attempts_seen IS 'Highest attempts among the jobs in that state.';

-- Whether a subscriber redeemed an offer code a campaign gave them: the lift views' redemptions of code campaigns.
CREATE FUNCTION reclaim.code_redeemed(bundle text, env text, campaign text, original_transaction text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM reclaim.offer_codes c JOIN reclaim.campaign_decisions d ON d.id = c.decision_id
                   WHERE c.bundle_id = bundle AND c.environment = env AND c.original_transaction_id = original_transaction
                     AND d.campaign_id = campaign AND c.redeemed_at IS NOT NULL)
$$;
COMMENT ON FUNCTION reclaim.code_redeemed(text, text, text, text) IS 'Whether the subscriber redeemed an offer code of the campaign (offer_codes.redeemed_at, inferred from the offer''s redemption).';

CREATE VIEW reclaim.campaign_funnel AS
SELECT d.bundle_id,
       d.environment,
       d.campaign_id,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped,
       count(o.id) + count(c.decision_id)                         AS offered,
       count(o.id) FILTER (WHERE o.delivered_at IS NOT NULL)      AS delivered,
       count(o.id) FILTER (WHERE EXISTS (SELECT 1 FROM reclaim.offer_events e WHERE e.offer_id = o.id AND e.event = 'shown')) AS shown,
       count(o.id) FILTER (WHERE o.state = 'redeemed') + count(c.redeemed_at) AS redeemed,
       count(o.id) FILTER (WHERE o.state = 'withdrawn')           AS withdrawn,
       count(o.id) FILTER (WHERE o.state = 'expired')             AS expired,
       count(c.decision_id)                                       AS codes_issued,
       count(c.redeemed_at)                                       AS codes_redeemed
FROM reclaim.campaign_decisions d
LEFT JOIN reclaim.offers o ON o.decision_id = d.id
LEFT JOIN reclaim.offer_codes c ON c.decision_id = d.id
GROUP BY d.bundle_id, d.environment, d.campaign_id;
COMMENT ON VIEW reclaim.campaign_funnel IS 'Per campaign and environment, all time: decisions and what became of their offers. Grants are not decisions and do not appear here. Filter on environment = ''Production'' for business numbers: Sandbox is TestFlight and testers.';
COMMENT ON COLUMN reclaim.campaign_funnel.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_funnel.environment IS 'Production or Sandbox (TestFlight and sandbox testers; not revenue).';
COMMENT ON COLUMN reclaim.campaign_funnel.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_funnel.decided IS 'Times a notification triggered the campaign (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.campaign_funnel.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.campaign_funnel.skipped IS 'Triggers a rule turned down (see campaign_decisions.reason).';
COMMENT ON COLUMN reclaim.campaign_funnel.offered IS 'Offers issued: signed offers, and offer codes (offer.offerCodes).';
COMMENT ON COLUMN reclaim.campaign_funnel.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.campaign_funnel.shown IS 'Offers the app reported as shown.';
COMMENT ON COLUMN reclaim.campaign_funnel.redeemed IS 'Offers Apple reported as redeemed (a code''s redemption is inferred: see offer_codes.redeemed_at).';
COMMENT ON COLUMN reclaim.campaign_funnel.withdrawn IS 'Offers withdrawn (superseded, or the subscriber came back without them).';
COMMENT ON COLUMN reclaim.campaign_funnel.expired IS 'Offers that reached deliverable_until unredeemed.';
COMMENT ON COLUMN reclaim.campaign_funnel.codes_issued IS 'Of offered: offer codes issued (sent by the offer.issued webhook, not fetched by the app: delivered and shown count signed offers only).';
COMMENT ON COLUMN reclaim.campaign_funnel.codes_redeemed IS 'Of redeemed: offer codes redeemed.';

CREATE VIEW reclaim.offer_code_pool_status AS
SELECT p.bundle_id,
       p.environment,
       p.offer_reference_name,
       p.product_id,
       p.eligibility,
       count(c.code) FILTER (WHERE c.decision_id IS NULL AND c.expires_at > now())  AS unused,
       count(c.code) FILTER (WHERE c.decision_id IS NOT NULL)                      AS issued,
       count(c.code) FILTER (WHERE c.redeemed_at IS NOT NULL)                      AS redeemed,
       count(c.code) FILTER (WHERE c.decision_id IS NULL AND c.expires_at <= now()) AS expired,
       min(c.expires_at) FILTER (WHERE c.decision_id IS NULL AND c.expires_at > now()) AS next_expiry,
       (SELECT count(DISTINCT r.original_transaction_id) FROM reclaim.offer_redemptions r
        WHERE r.bundle_id = p.bundle_id AND r.environment = p.environment AND r.offer_type = 3
          AND r.offer_identifier = p.offer_reference_name AND r.code_decision_id IS NULL) AS redeemed_without_code
FROM reclaim.offer_code_pools p
LEFT JOIN reclaim.offer_codes c
  ON c.bundle_id = p.bundle_id AND c.environment = p.environment AND c.offer_reference_name = p.offer_reference_name
GROUP BY p.bundle_id, p.environment, p.offer_reference_name;
COMMENT ON VIEW reclaim.offer_code_pool_status IS 'Each offer-code pool now (reclaim codes status): unused + issued + expired is every code imported; redeemed is part of issued.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.offer_reference_name IS 'The offer''s reference name in App Store Connect.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.product_id IS 'The offer''s product.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.eligibility IS 'The customer eligibilities: new, existing, expired.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.unused IS 'Codes not issued and not expired: what campaigns can still hand out.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.issued IS 'Codes issued to a subscriber (redeemed ones included).';
COMMENT ON COLUMN reclaim.offer_code_pool_status.redeemed IS 'Issued codes whose offer the subscriber redeemed (inferred: Apple names the offer, not the code).';
COMMENT ON COLUMN reclaim.offer_code_pool_status.expired IS 'Codes that expired unissued.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.next_expiry IS 'When the first unused code expires; NULL when none is left.';
COMMENT ON COLUMN reclaim.offer_code_pool_status.redeemed_without_code IS 'Subscribers who redeemed this offer (offerType 3) though Reclaim gave them none of its codes: codes sent some other way, or passed on.';

CREATE VIEW reclaim.campaign_decisions_by_source AS
SELECT d.bundle_id,
       d.environment,
       d.campaign_id,
       coalesce(d.variant_id, '')                                 AS variant_id,
       CASE n.source WHEN 'backfill' THEN 'backfill' ELSE 'live' END AS source,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'offered')              AS offered,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped
FROM reclaim.campaign_decisions d
JOIN reclaim.notifications n ON n.notification_uuid = d.notification_uuid
GROUP BY 1, 2, 3, 4, 5;
COMMENT ON VIEW reclaim.campaign_decisions_by_source IS 'Per campaign (and variant) and environment, all time: decisions made on live notifications and on the state reclaim backfill --evaluate imported, apart (campaign_funnel and the lift views count both together). A decision''s source is its triggering notification''s (a delayed campaign''s fire keeps its trigger''s).';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.variant_id IS 'The variant of an experiment; empty without variants.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.source IS 'live (a notification Apple sent, or its history returned) or backfill (an implied notification of reclaim backfill --evaluate).';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.decided IS 'Decisions: offered + held out + skipped.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.offered IS 'Offers issued.';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.held_out IS 'Held out (the control group).';
COMMENT ON COLUMN reclaim.campaign_decisions_by_source.skipped IS 'Turned down by a rule (campaign_decisions.reason).';

CREATE VIEW reclaim.discount_channels_daily AS
SELECT r.bundle_id,
       r.environment,
       (date_trunc('day', r.redeemed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS day,
       CASE WHEN r.offer_id IS NOT NULL THEN 'reclaim'
            WHEN r.offer_type = 2 THEN 'promotional_elsewhere'
            WHEN r.offer_type = 3 THEN 'offer_code'
            WHEN r.offer_type = 4 THEN 'win_back'
            WHEN r.offer_type = 5 THEN 'retention_offer'
            ELSE 'other' END AS channel,
       count(*) AS redemptions,
       count(DISTINCT r.original_transaction_id) AS subscribers
FROM reclaim.offer_redemptions r
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.discount_channels_daily IS 'Discounted purchases per UTC day and channel, Reclaim''s apart from the doors Reclaim does not open: the other half of the funnel (campaign_funnel counts Reclaim''s offers only).';
COMMENT ON COLUMN reclaim.discount_channels_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.discount_channels_daily.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.discount_channels_daily.day IS 'The UTC day of redeemed_at.';
COMMENT ON COLUMN reclaim.discount_channels_daily.channel IS 'reclaim (an offer Reclaim issued), promotional_elsewhere (offerType 2 Reclaim did not issue), offer_code (3), win_back (4), retention_offer (5, App Store Connect''s cancel-sheet offers) or other (a type Apple added later).';
COMMENT ON COLUMN reclaim.discount_channels_daily.redemptions IS 'Discounted transactions (a pay-as-you-go offer''s renewals each count).';
COMMENT ON COLUMN reclaim.discount_channels_daily.subscribers IS 'Distinct subscriptions among them.';

CREATE VIEW reclaim.win_back_doors AS
SELECT d.bundle_id,
       d.environment,
       'campaign'::text                                                           AS door,
       d.campaign_id,
       count(*)                                                                   AS decisions,
       count(*) FILTER (WHERE d.apple_win_back_listed)                            AS apple_listed,
       count(*) FILTER (WHERE d.outcome = 'skipped' AND d.reason LIKE 'standing aside:%') AS stood_aside,
       count(DISTINCT d.original_transaction_id) FILTER (WHERE d.outcome = 'offered') AS subscribers_offered,
       count(DISTINCT d.original_transaction_id) FILTER (WHERE d.outcome = 'offered' AND (
           EXISTS (SELECT 1 FROM reclaim.offers o WHERE o.decision_id = d.id AND o.state = 'redeemed')
           OR EXISTS (SELECT 1 FROM reclaim.offer_codes c WHERE c.decision_id = d.id AND c.redeemed_at IS NOT NULL))) AS subscribers_redeemed
FROM reclaim.campaign_decisions d
GROUP BY d.bundle_id, d.environment, d.campaign_id
UNION ALL
SELECT r.bundle_id,
       r.environment,
       CASE r.offer_type WHEN 4 THEN 'apple_win_back' WHEN 5 THEN 'app_store_connect_retention' ELSE 'offer_code_outside_reclaim' END,
       NULL,
       NULL,
       NULL,
       NULL,
       NULL,
       count(DISTINCT r.original_transaction_id)
FROM reclaim.offer_redemptions r
WHERE r.offer_type IN (4, 5) OR (r.offer_type = 3 AND r.code_decision_id IS NULL)
GROUP BY 1, 2, 3;
COMMENT ON VIEW reclaim.win_back_doors IS 'Which door won back whom, per app and environment, all time: each campaign (its decisions, those made while Apple listed win-back offers for the subscriber and those that stood aside for them, subscribers offered and those who redeemed), beside the doors Reclaim does not open: Apple''s win-back offers (offerType 4), App Store Connect''s retention offers (5) and offer codes Reclaim did not give (3). reclaim campaigns report prints it.';
COMMENT ON COLUMN reclaim.win_back_doors.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.win_back_doors.environment IS 'Production or Sandbox; never sum the two.';
COMMENT ON COLUMN reclaim.win_back_doors.door IS 'campaign (one of Reclaim''s), apple_win_back, app_store_connect_retention or offer_code_outside_reclaim.';
COMMENT ON COLUMN reclaim.win_back_doors.campaign_id IS 'For campaign: which; NULL for Apple''s doors.';
COMMENT ON COLUMN reclaim.win_back_doors.decisions IS 'For campaign: decisions made (offered, held out, skipped); NULL for Apple''s doors.';
COMMENT ON COLUMN reclaim.win_back_doors.apple_listed IS 'For campaign: decisions made while Apple listed win-back offers for the subscriber (since schema 31).';
COMMENT ON COLUMN reclaim.win_back_doors.stood_aside IS 'For campaign: decisions skipped to stand aside for Apple''s win-back offers (standAsideForWinBack).';
COMMENT ON COLUMN reclaim.win_back_doors.subscribers_offered IS 'For campaign: subscribers it offered to (a signed offer or a code).';
COMMENT ON COLUMN reclaim.win_back_doors.subscribers_redeemed IS 'Subscribers who redeemed: a campaign''s offer or code, or a discount through Apple''s door.';

CREATE VIEW reclaim.offer_funnel_daily AS
SELECT d.bundle_id,
       d.environment,
       d.campaign_id,
       (d.triggered_at AT TIME ZONE 'UTC')::date                  AS day,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped,
       count(o.id) + count(c.decision_id)                         AS offered,
       count(o.id) FILTER (WHERE o.delivered_at IS NOT NULL)      AS delivered,
       count(o.id) FILTER (WHERE EXISTS (SELECT 1 FROM reclaim.offer_events e WHERE e.offer_id = o.id AND e.event = 'shown')) AS shown,
       count(o.id) FILTER (WHERE o.state = 'redeemed') + count(c.redeemed_at) AS redeemed,
       count(o.id) FILTER (WHERE o.state = 'withdrawn')           AS withdrawn,
       count(o.id) FILTER (WHERE o.state = 'expired')             AS expired,
       count(c.decision_id)                                       AS codes_issued,
       count(c.redeemed_at)                                       AS codes_redeemed
FROM reclaim.campaign_decisions d
LEFT JOIN reclaim.offers o ON o.decision_id = d.id
LEFT JOIN reclaim.offer_codes c ON c.decision_id = d.id
GROUP BY d.bundle_id, d.environment, d.campaign_id, (d.triggered_at AT TIME ZONE 'UTC')::date;
COMMENT ON VIEW reclaim.offer_funnel_daily IS 'Per campaign, environment and UTC day of the triggering notification: decisions and what became of their offers. Sum over days for a period; filter on environment = ''Production'' for business numbers.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.environment IS 'Production or Sandbox (TestFlight and sandbox testers; not revenue).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.day IS 'UTC date of the triggering notification''s signedDate.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.decided IS 'Triggers (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.skipped IS 'Triggers a rule turned down.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.offered IS 'Offers issued: signed offers, and offer codes (offer.offerCodes).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.shown IS 'Offers the app reported as shown.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.redeemed IS 'Offers Apple reported as redeemed (a code''s redemption is inferred: see offer_codes.redeemed_at).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.withdrawn IS 'Offers withdrawn.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.expired IS 'Offers that expired unredeemed.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.codes_issued IS 'Of offered: offer codes issued (sent by the offer.issued webhook, not fetched by the app: delivered and shown count signed offers only).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.codes_redeemed IS 'Of redeemed: offer codes redeemed.';

CREATE VIEW reclaim.offer_revenue_daily AS
SELECT r.bundle_id,
       r.environment,
       coalesce(o.campaign_id, '(not issued by Reclaim)')         AS campaign_id,
       (r.redeemed_at AT TIME ZONE 'UTC')::date                   AS day,
       coalesce(r.currency, '')                                   AS currency,
       count(*)                                                   AS redemptions,
       coalesce(sum(r.price), 0)                                  AS revenue_milli
FROM reclaim.offer_redemptions r
LEFT JOIN reclaim.offers o ON o.id = r.offer_id
GROUP BY 1, 2, 3, 4, 5;
COMMENT ON VIEW reclaim.offer_revenue_daily IS 'Promotional-offer purchases per campaign, environment, UTC day and currency, with what they paid. Only environment = ''Production'' is revenue: Sandbox purchases (TestFlight, testers) are not charged. Purchases of offers Reclaim did not issue appear under ''(not issued by Reclaim)''.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.environment IS 'Production (revenue) or Sandbox (not charged).';
COMMENT ON COLUMN reclaim.offer_revenue_daily.campaign_id IS 'The campaign or grant label of the redeemed offer.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.day IS 'UTC date of the purchase.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.currency IS 'ISO 4217 currency ('''' when Apple sent none).';
COMMENT ON COLUMN reclaim.offer_revenue_daily.redemptions IS 'Purchases.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.revenue_milli IS 'Sum of the prices paid, in milli-units of currency (divide by 1000).';

CREATE VIEW reclaim.campaign_lift AS
WITH subjects AS (
    SELECT DISTINCT ON (d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id)
           d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.outcome, d.triggered_at
    FROM reclaim.campaign_decisions d
    WHERE d.outcome IN ('offered', 'held_out')
    ORDER BY d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.triggered_at)
SELECT s.bundle_id,
       s.environment,
       s.campaign_id,
       count(*) FILTER (WHERE s.outcome = 'offered')              AS treated,
       count(*) FILTER (WHERE s.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE s.outcome = 'offered' AND (EXISTS (
           SELECT 1 FROM reclaim.offers o JOIN reclaim.campaign_decisions d2 ON d2.id = o.decision_id
           WHERE d2.campaign_id = s.campaign_id AND o.bundle_id = s.bundle_id AND o.environment = s.environment
             AND o.original_transaction_id = s.original_transaction_id AND o.state = 'redeemed')
           OR reclaim.code_redeemed(s.bundle_id, s.environment, s.campaign_id, s.original_transaction_id))) AS treated_redeemed,
       count(*) FILTER (WHERE s.outcome = 'offered' AND sub.expires_at > s.triggered_at + interval '30 days') AS treated_retained_30d,
       count(*) FILTER (WHERE s.outcome = 'held_out' AND sub.expires_at > s.triggered_at + interval '30 days') AS held_out_retained_30d
FROM subjects s
LEFT JOIN reclaim.subscriptions sub
  ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id
GROUP BY s.bundle_id, s.environment, s.campaign_id;
COMMENT ON VIEW reclaim.campaign_lift IS 'Per campaign and environment: subscribers treated (first decision offered) against held out (first decision held out), with redemptions and 30-day retention of each group. Retained: the subscription now runs until more than 30 days after the first trigger. Compare the rates, and mind the group sizes.';
COMMENT ON COLUMN reclaim.campaign_lift.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_lift.environment IS 'Production or Sandbox; compare groups within one environment.';
COMMENT ON COLUMN reclaim.campaign_lift.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_lift.treated IS 'Subscribers whose first decision of this campaign offered.';
COMMENT ON COLUMN reclaim.campaign_lift.held_out IS 'Subscribers whose first decision of this campaign held them out.';
COMMENT ON COLUMN reclaim.campaign_lift.treated_redeemed IS 'Treated subscribers who redeemed an offer of this campaign (a signed offer, or an offer code it gave them).';
COMMENT ON COLUMN reclaim.campaign_lift.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_lift.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past their first trigger.';

-- 95% confidence intervals, in SQL the operator owns (checked against statsmodels in the tests).
CREATE FUNCTION reclaim.wilson_interval(successes bigint, trials bigint, OUT lower double precision, OUT upper double precision)
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n),
           (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
    FROM (SELECT successes::float8 / nullif(trials, 0) AS p, nullif(trials, 0)::float8 AS n, 1.959963984540054::float8 AS z) AS v
$$;
COMMENT ON FUNCTION reclaim.wilson_interval(bigint, bigint) IS 'Wilson score 95% interval of successes/trials (NULLs for no trials): an interval that stays inside 0..1 and behaves for small groups and for 0 or all successes.';

CREATE FUNCTION reclaim.newcombe_interval(x1 bigint, n1 bigint, x2 bigint, n2 bigint, OUT lower double precision, OUT upper double precision)
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p1 - p2) - sqrt((p1 - w1.lower) ^ 2 + (w2.upper - p2) ^ 2),
           (p1 - p2) + sqrt((w1.upper - p1) ^ 2 + (p2 - w2.lower) ^ 2)
    FROM (SELECT x1::float8 / nullif(n1, 0) AS p1, x2::float8 / nullif(n2, 0) AS p2) AS v,
         reclaim.wilson_interval(x1, n1) AS w1, reclaim.wilson_interval(x2, n2) AS w2
$$;
COMMENT ON FUNCTION reclaim.newcombe_interval(bigint, bigint, bigint, bigint) IS 'Newcombe''s hybrid score 95% interval of x1/n1 - x2/n2, from the two Wilson intervals (NULLs when a group is empty).';

CREATE FUNCTION reclaim.campaign_variant_counts_since(since timestamptz)
RETURNS TABLE (bundle_id text, environment text, campaign_id text, variant_id text, treated bigint, held_out bigint,
               treated_redeemed bigint, treated_retained_30d bigint, held_out_retained_30d bigint)
LANGUAGE sql STABLE AS $$
WITH subjects AS (
    -- Each subscriber once per campaign: their first decision that offered or held out, with its arm.
    SELECT DISTINCT ON (d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id)
           d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.outcome, d.triggered_at,
           coalesce(d.variant_id, '') AS variant_id
    FROM reclaim.campaign_decisions d
    WHERE d.outcome IN ('offered', 'held_out')
      -- Subscribers whose first trigger in the period is on or after `since`.
      AND d.triggered_at >= since
    ORDER BY d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.triggered_at),
measured AS (
    SELECT s.bundle_id, s.environment, s.campaign_id, s.variant_id, s.outcome,
           EXISTS (SELECT 1 FROM reclaim.offers o JOIN reclaim.campaign_decisions d2 ON d2.id = o.decision_id
                   WHERE d2.campaign_id = s.campaign_id AND o.bundle_id = s.bundle_id AND o.environment = s.environment
                     AND o.original_transaction_id = s.original_transaction_id AND o.state = 'redeemed')
           OR reclaim.code_redeemed(s.bundle_id, s.environment, s.campaign_id, s.original_transaction_id) AS redeemed,
           coalesce(sub.expires_at > s.triggered_at + interval '30 days', false) AS retained
    FROM subjects s
    LEFT JOIN reclaim.subscriptions sub
      ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id),
treated AS (
    SELECT bundle_id, environment, campaign_id, variant_id, count(*) AS n, count(*) FILTER (WHERE redeemed) AS redeemed,
           count(*) FILTER (WHERE retained) AS retained
    FROM measured WHERE outcome = 'offered' GROUP BY 1, 2, 3, 4),
held AS (
    SELECT bundle_id, environment, campaign_id, count(*) AS n, count(*) FILTER (WHERE retained) AS retained
    FROM measured WHERE outcome = 'held_out' GROUP BY 1, 2, 3)
SELECT coalesce(t.bundle_id, h.bundle_id) AS bundle_id, coalesce(t.environment, h.environment) AS environment,
       coalesce(t.campaign_id, h.campaign_id) AS campaign_id, coalesce(t.variant_id, '') AS variant_id,
       coalesce(t.n, 0) AS treated, coalesce(h.n, 0) AS held_out, coalesce(t.redeemed, 0) AS treated_redeemed,
       coalesce(t.retained, 0) AS treated_retained_30d, coalesce(h.retained, 0) AS held_out_retained_30d
FROM treated t
FULL JOIN held h ON h.bundle_id = t.bundle_id AND h.environment = t.environment AND h.campaign_id = t.campaign_id;
$$;
COMMENT ON FUNCTION reclaim.campaign_variant_counts_since(timestamptz) IS 'campaign_variant_counts of the subscribers first triggered on or after since (reclaim campaigns report --since).';

CREATE VIEW reclaim.campaign_variant_counts AS SELECT * FROM reclaim.campaign_variant_counts_since('-infinity');
COMMENT ON VIEW reclaim.campaign_variant_counts IS 'Per campaign, environment and variant: subscribers treated with that variant (their first decision offered it) against the campaign''s held-out group, with redemptions and 30-day retention: the counts campaign_variant_lift works on.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.variant_id IS 'The variant (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated IS 'Subscribers whose first decision of the campaign offered this variant.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.held_out IS 'The campaign''s held-out subscribers (the same on every variant''s row).';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated_redeemed IS 'Treated subscribers who redeemed an offer of the campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_counts.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past their first trigger.';

CREATE FUNCTION reclaim.campaign_variant_lift_since(since timestamptz)
RETURNS TABLE (bundle_id text, environment text, campaign_id text, variant_id text, treated bigint, held_out bigint,
               redemption_rate float8, redemption_rate_lower float8, redemption_rate_upper float8,
               treated_retention float8, treated_retention_lower float8, treated_retention_upper float8,
               held_out_retention float8, held_out_retention_lower float8, held_out_retention_upper float8,
               retention_lift float8, retention_lift_lower float8, retention_lift_upper float8, verdict text, needed_per_group bigint)
LANGUAGE sql STABLE AS $$
SELECT c.bundle_id, c.environment, c.campaign_id, c.variant_id, c.treated, c.held_out,
       rates.redemption AS redemption_rate, r.lower AS redemption_rate_lower, r.upper AS redemption_rate_upper,
       rates.pt AS treated_retention, t.lower AS treated_retention_lower, t.upper AS treated_retention_upper,
       rates.ph AS held_out_retention, h.lower AS held_out_retention_lower, h.upper AS held_out_retention_upper,
       rates.pt - rates.ph AS retention_lift, d.lower AS retention_lift_lower, d.upper AS retention_lift_upper,
       CASE WHEN c.treated = 0 OR c.held_out = 0 THEN 'no holdout to compare'
            WHEN d.lower > 0 THEN 'better'
            WHEN d.upper < 0 THEN 'worse'
            ELSE 'not yet distinguishable' END AS verdict,
       -- The group size (each group) at which a difference this large would be distinguishable, by the normal
       -- approximation n = z^2 (p1 q1 + p2 q2) / d^2; NULL when it already is, or there is no difference to see.
       CASE WHEN d.lower <= 0 AND d.upper >= 0 AND rates.pt <> rates.ph
            -- Capped below bigint's limit: two huge groups differing by a hair would otherwise fail the whole query.
            THEN least(ceil(1.959963984540054 ^ 2 * (rates.pt * (1 - rates.pt) + rates.ph * (1 - rates.ph)) / (rates.pt - rates.ph) ^ 2), 9e18)::bigint
       END AS needed_per_group
FROM reclaim.campaign_variant_counts_since(since) c
CROSS JOIN LATERAL (SELECT c.treated_redeemed::float8 / nullif(c.treated, 0) AS redemption,
                           c.treated_retained_30d::float8 / nullif(c.treated, 0) AS pt,
                           c.held_out_retained_30d::float8 / nullif(c.held_out, 0) AS ph) AS rates
CROSS JOIN LATERAL reclaim.wilson_interval(c.treated_redeemed, c.treated) AS r
CROSS JOIN LATERAL reclaim.wilson_interval(c.treated_retained_30d, c.treated) AS t
CROSS JOIN LATERAL reclaim.wilson_interval(c.held_out_retained_30d, c.held_out) AS h
CROSS JOIN LATERAL reclaim.newcombe_interval(c.treated_retained_30d, c.treated, c.held_out_retained_30d, c.held_out) AS d;
$$;
COMMENT ON FUNCTION reclaim.campaign_variant_lift_since(timestamptz) IS 'campaign_variant_lift of the subscribers first triggered on or after since (reclaim campaigns report --since).';

CREATE VIEW reclaim.campaign_variant_lift AS SELECT * FROM reclaim.campaign_variant_lift_since('-infinity');
COMMENT ON VIEW reclaim.campaign_variant_lift IS 'Each campaign variant against the campaign''s holdout, with 95% confidence intervals: Wilson for each proportion, Newcombe for the retention lift (treated minus held out), and a verdict: better or worse when the lift''s interval excludes 0, else not yet distinguishable, with the group size at which the observed lift would be.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.variant_id IS 'The variant (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated IS 'Subscribers whose first decision of the campaign offered this variant.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out IS 'The campaign''s held-out subscribers.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate IS 'Share of the treated who redeemed an offer of the campaign.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.redemption_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention IS 'Share of the treated retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.treated_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention IS 'Share of the held out retained 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.held_out_retention_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift IS 'treated_retention minus held_out_retention.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.retention_lift_upper IS 'Its 95% Newcombe interval, upper bound.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.verdict IS 'better, worse, not yet distinguishable, or no holdout to compare.';
COMMENT ON COLUMN reclaim.campaign_variant_lift.needed_per_group IS 'For not yet distinguishable: about how many subscribers each group needs before a lift this large would be distinguishable.';

CREATE VIEW reclaim.cancel_sheet_save_rates AS
WITH firsts AS (
    SELECT d.bundle_id, d.environment, d.campaign_id, d.outcome, coalesce(d.variant_id, '') AS variant_id, d.save_outcome
    FROM reclaim.cancel_sheet_decisions d
    WHERE d.repeat_of IS NULL AND NOT d.shadow AND d.outcome IN ('answered', 'held_out')),
arms AS (
    SELECT bundle_id, environment, campaign_id, variant_id, count(*) FILTER (WHERE save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome IS NULL OR save_outcome = 'unknown') AS undecided
    FROM firsts WHERE outcome = 'answered' GROUP BY 1, 2, 3, 4),
held AS (
    SELECT bundle_id, environment, campaign_id, count(*) FILTER (WHERE save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome IS NULL OR save_outcome = 'unknown') AS undecided
    FROM firsts WHERE outcome = 'held_out' GROUP BY 1, 2, 3)
SELECT a.bundle_id, a.environment, a.campaign_id, a.variant_id, a.saved, a.lost, a.undecided,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       coalesce(h.saved, 0) AS held_out_saved, coalesce(h.lost, 0) AS held_out_lost, coalesce(h.undecided, 0) AS held_out_undecided,
       h.saved::float8 / nullif(h.saved + h.lost, 0) AS held_out_save_rate, o.lower AS held_out_save_rate_lower, o.upper AS held_out_save_rate_upper,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - h.saved::float8 / nullif(h.saved + h.lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper
FROM arms a
LEFT JOIN held h ON h.bundle_id = a.bundle_id AND h.environment = a.environment AND h.campaign_id = a.campaign_id
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.wilson_interval(coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS o
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS l;
COMMENT ON VIEW reclaim.cancel_sheet_save_rates IS 'Each cancel-sheet campaign''s arm against its holdout: first decisions settled as saved or lost at the end of the saveWindow, the save rate with a 95% Wilson interval, and the lift over the holdout with a 95% Newcombe interval. The holdout was answered {}, so the lift is over Apple''s own fallback (App Store Connect''s retention offers or its default message), not over showing nothing. Shadow and held-back decisions are left out.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.campaign_id IS 'The cancel-sheet campaign.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.variant_id IS 'The arm (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.saved IS 'First decisions of the arm settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lost IS 'First decisions of the arm settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.undecided IS 'First decisions whose window is still open, or whose subscription Reclaim does not know: not in the rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate IS 'saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_saved IS 'The campaign''s held-out first decisions settled as saved (the same on every arm''s row).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_lost IS 'Held-out first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_undecided IS 'Held-out first decisions not settled, or unknown.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate IS 'The holdout''s saved / (saved + lost): Apple''s fallback''s save rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.held_out_save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift IS 'save_rate minus held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates.lift_upper IS 'Its 95% Newcombe interval, upper bound.';

CREATE VIEW reclaim.subscriber_status AS
SELECT bundle_id, environment, coalesce(product_id, '') AS product_id, status, count(*) AS subscribers
FROM reclaim.subscriptions
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.subscriber_status IS 'Subscriptions per app, environment, current product and status.';
COMMENT ON COLUMN reclaim.subscriber_status.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.subscriber_status.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.subscriber_status.product_id IS 'The current product ('''' when unknown).';
COMMENT ON COLUMN reclaim.subscriber_status.status IS 'active, expired, billing_retry, grace_period, revoked, refunded or unknown.';
COMMENT ON COLUMN reclaim.subscriber_status.subscribers IS 'Subscriptions in that state.';

CREATE VIEW reclaim.churn_reasons_daily AS
SELECT bundle_id, environment, (signed_date AT TIME ZONE 'UTC')::date AS day, coalesce(subtype, '') AS reason, count(*) AS expirations
FROM reclaim.notifications
WHERE notification_type = 'EXPIRED' AND source = 'apple'
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.churn_reasons_daily IS 'Subscriptions that expired per UTC day and reason (the EXPIRED notification''s subtype, Apple''s expirationIntent in words).';
COMMENT ON COLUMN reclaim.churn_reasons_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.day IS 'UTC date of the EXPIRED notification''s signedDate.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.reason IS 'VOLUNTARY (cancelled), BILLING_RETRY (billing failed), PRICE_INCREASE (declined it), PRODUCT_NOT_FOR_SALE, or '''' (other).';
COMMENT ON COLUMN reclaim.churn_reasons_daily.expirations IS 'Expirations.';

CREATE VIEW reclaim.dead_jobs AS
SELECT id, kind, notification_uuid, attempts, last_error, updated_at AS died_at, target
FROM reclaim.jobs
WHERE state = 'dead';
COMMENT ON VIEW reclaim.dead_jobs IS 'Jobs that failed their maximum attempts, with their last error (requeue with `reclaim jobs dead --retry`).';
COMMENT ON COLUMN reclaim.dead_jobs.id IS 'Job id.';
COMMENT ON COLUMN reclaim.dead_jobs.kind IS 'What the job does.';
COMMENT ON COLUMN reclaim.dead_jobs.notification_uuid IS 'The notification it processes, if any.';
COMMENT ON COLUMN reclaim.dead_jobs.attempts IS 'Attempts made.';
COMMENT ON COLUMN reclaim.dead_jobs.last_error IS 'The error of the last attempt.';
COMMENT ON COLUMN reclaim.dead_jobs.died_at IS 'When it was declared dead.';
COMMENT ON COLUMN reclaim.dead_jobs.target IS 'For forward and webhook jobs: the target it could not reach.';

CREATE VIEW reclaim.notifications_daily AS
SELECT bundle_id, environment, (signed_date AT TIME ZONE 'UTC')::date AS day, notification_type, coalesce(subtype, '') AS subtype,
       count(*) AS notifications
FROM reclaim.notifications
WHERE source = 'apple'
GROUP BY 1, 2, 3, 4, 5;
COMMENT ON VIEW reclaim.notifications_daily IS 'Notifications accepted per app, environment, UTC day, type and subtype.';
COMMENT ON COLUMN reclaim.notifications_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.notifications_daily.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.notifications_daily.day IS 'UTC date of the notification''s signedDate.';
COMMENT ON COLUMN reclaim.notifications_daily.notification_type IS 'Apple''s notificationType.';
COMMENT ON COLUMN reclaim.notifications_daily.subtype IS 'Apple''s subtype ('''' when none).';
COMMENT ON COLUMN reclaim.notifications_daily.notifications IS 'Notifications.';

CREATE VIEW reclaim.rejected_inputs_daily AS
SELECT (received_at AT TIME ZONE 'UTC')::date AS day, endpoint, problem, count(*) AS rejections
FROM reclaim.rejected_inputs
GROUP BY 1, 2, 3;
COMMENT ON VIEW reclaim.rejected_inputs_daily IS 'Refused inputs per UTC day, endpoint and reason (of those kept: server.rejectedInputsKept).';
COMMENT ON COLUMN reclaim.rejected_inputs_daily.day IS 'UTC date of the refusal.';
COMMENT ON COLUMN reclaim.rejected_inputs_daily.endpoint IS 'The HTTP route.';
COMMENT ON COLUMN reclaim.rejected_inputs_daily.problem IS 'The problem type slug, e.g. invalid-signature.';
COMMENT ON COLUMN reclaim.rejected_inputs_daily.rejections IS 'Refusals.';

CREATE TABLE reclaim.rescinded_consents (
    bundle_id          text        NOT NULL,
    environment        text        NOT NULL,
    app_transaction_id text        NOT NULL,
    rescinded_at       timestamptz NOT NULL,
    notification_uuid  uuid        NOT NULL,
    PRIMARY KEY (bundle_id, environment, app_transaction_id)
);
COMMENT ON TABLE reclaim.rescinded_consents IS 'App accounts whose parent or guardian withdrew consent for the app (RESCIND_CONSENT: "the parent or guardian has withdrawn consent for a child''s app usage"): their subscriptions, present and future, get no campaign, grant or cancel-sheet answer (reclaim.subscriptions.consent_rescinded_at).';
COMMENT ON COLUMN reclaim.rescinded_consents.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.rescinded_consents.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.rescinded_consents.app_transaction_id IS 'The app account: appTransactionId of the notification''s signed app transaction.';
COMMENT ON COLUMN reclaim.rescinded_consents.rescinded_at IS 'The notification''s signedDate (the first one, when Apple sends more).';
COMMENT ON COLUMN reclaim.rescinded_consents.notification_uuid IS 'The RESCIND_CONSENT notification.';

-- ---------------------------------------------------------------------------------------------
-- Subscribers forgotten on request (reclaim subscribers forget, docs/privacy.md).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.erasures (
    id            uuid        PRIMARY KEY,
    bundle_id     text,
    erased_at     timestamptz NOT NULL DEFAULT now(),
    subscriptions integer     NOT NULL,
    rows          jsonb       NOT NULL
);
COMMENT ON TABLE reclaim.erasures IS 'Every reclaim subscribers forget that found something to erase, without the subscriber''s identifiers: when, in which app, and how many rows of each table were redacted or deleted.';
COMMENT ON COLUMN reclaim.erasures.id IS 'The erasure; also the pseudonym (forgotten:<id>) its redacted rows carry in place of the original transaction id, which ties them to each other and to no one.';
COMMENT ON COLUMN reclaim.erasures.bundle_id IS 'The app the erasure was limited to (--app); NULL: every app.';
COMMENT ON COLUMN reclaim.erasures.erased_at IS 'When the erasure committed.';
COMMENT ON COLUMN reclaim.erasures.subscriptions IS 'Subscriptions found and redacted.';
COMMENT ON COLUMN reclaim.erasures.rows IS 'Per table, the rows redacted or deleted, e.g. {"notifications": 12, "jobs": 14}.';

CREATE TABLE reclaim.forgotten_subscribers (
    kind       text        NOT NULL CHECK (kind IN ('original_transaction_id', 'app_account_token')),
    sha256     bytea       NOT NULL,
    bundle_id  text        NOT NULL,
    erasure_id uuid        NOT NULL REFERENCES reclaim.erasures (id),
    PRIMARY KEY (kind, sha256, bundle_id)
);
COMMENT ON TABLE reclaim.forgotten_subscribers IS 'One-way hashes of the identifiers of forgotten subscribers (reclaim.forgotten_hash): a notification, a backfilled status or a grant for one is dropped (its stored copy redacted) instead of bringing the subscriber back, so no campaign contacts them again.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.kind IS 'original_transaction_id or app_account_token.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.sha256 IS 'reclaim.forgotten_hash(kind, the identifier): anyone who already knows an identifier can tell whether it was forgotten; the identifiers cannot be listed from it without guessing them.';
COMMENT ON COLUMN reclaim.forgotten_subscribers.bundle_id IS 'The app whose notifications are dropped; '''' (empty): every app (forgotten without --app).';
COMMENT ON COLUMN reclaim.forgotten_subscribers.erasure_id IS 'The erasure that recorded it.';

CREATE FUNCTION reclaim.forgotten_hash(kind text, identifier text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sha256(convert_to('reclaim forgotten ' || kind || ' ' || lower(identifier), 'UTF8'));
COMMENT ON FUNCTION reclaim.forgotten_hash(text, text) IS 'SHA-256 of a forgotten subscriber''s identifier (tokens in lowercase), as reclaim.forgotten_subscribers keeps it.';

CREATE FUNCTION reclaim.is_forgotten(bundle text, original_transaction_id text, app_account_token uuid) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN EXISTS (
        SELECT 1 FROM reclaim.forgotten_subscribers f
        WHERE f.bundle_id IN ('', bundle)
          AND ((f.kind = 'original_transaction_id' AND f.sha256 = reclaim.forgotten_hash('original_transaction_id', original_transaction_id))
            OR (f.kind = 'app_account_token' AND f.sha256 = reclaim.forgotten_hash('app_account_token', app_account_token::text))));
COMMENT ON FUNCTION reclaim.is_forgotten(text, text, uuid) IS 'Whether a subscriber of the app, by either identifier (NULL: not known), was forgotten (reclaim subscribers forget).';

-- ---------------------------------------------------------------------------------------------
-- Refund requests (CONSUMPTION_REQUEST) answered by policy.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.messaging_uploads (
    bundle_id    text        NOT NULL,
    environment  text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('message', 'image')),
    id           text        NOT NULL,
    sha256       text        NOT NULL,
    uploaded_at  timestamptz,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, environment, kind, id)
);
COMMENT ON TABLE reclaim.messaging_uploads IS 'Every Retention Messaging message and image reclaim messaging apply uploaded (or tried to), per app and environment: Apple has no update (a message or image is uploaded once under its id) and its lists give ids and review states only, so the hash kept here is how a changed text under an uploaded id is caught.';
COMMENT ON COLUMN reclaim.messaging_uploads.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.messaging_uploads.environment IS 'Production or Sandbox: Apple keeps each apart.';
COMMENT ON COLUMN reclaim.messaging_uploads.kind IS 'message or image.';
COMMENT ON COLUMN reclaim.messaging_uploads.id IS 'The message or image identifier (a UUID, lowercase).';
COMMENT ON COLUMN reclaim.messaging_uploads.sha256 IS 'SHA-256 (hex) of what was sent: the message body as JSON with sorted keys, or the PNG and its size.';
COMMENT ON COLUMN reclaim.messaging_uploads.uploaded_at IS 'When Apple accepted it (2xx, or 409 for this same content after a lost answer); NULL: tried, not known to have landed.';
COMMENT ON COLUMN reclaim.messaging_uploads.attempted_at IS 'The latest attempt.';

CREATE TABLE reclaim.refund_requests (
    id                       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    notification_uuid        uuid        NOT NULL UNIQUE,
    bundle_id                text        NOT NULL,
    environment              text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    transaction_id           text        NOT NULL,
    product_id               text,
    product_type             text,
    reason                   text,
    requested_at             timestamptz NOT NULL,
    arm                      text        NOT NULL CHECK (arm IN ('policy', 'holdout', 'unmatched')),
    policy_id                text,
    body                     jsonb,
    status                   text        NOT NULL DEFAULT 'pending' CONSTRAINT refund_requests_status_check CHECK (status IN ('pending', 'sent', 'refused', 'expired', 'unanswered')),
    apple_status             integer,
    apple_error              text,
    sent_at                  timestamptz,
    outcome                  text        CHECK (outcome IN ('refunded', 'declined')),
    outcome_at               timestamptz,
    revocation_type          text,
    revocation_percentage    integer,
    created_at               timestamptz NOT NULL DEFAULT now(),
    counterpart_policy       text,
    storefront               text,
    purchase_date            timestamptz,
    original_purchase_date   timestamptz,
    earlier_refunds          integer,
    discount_redeemed        boolean,
    free_trial_seen          boolean,
    billing_plan_type        text,
    billing_period           text        CHECK (billing_period IN ('current', 'past'))
);
CREATE INDEX refund_requests_transaction_idx ON reclaim.refund_requests (bundle_id, environment, transaction_id);
COMMENT ON TABLE reclaim.refund_requests IS 'Every CONSUMPTION_REQUEST of an app with refunds configured: the answer decided (arm, policy, body), whether and when it reached Apple, and what Apple decided (REFUND or REFUND_DECLINED for the transaction).';
COMMENT ON COLUMN reclaim.refund_requests.id IS 'Request id.';
COMMENT ON COLUMN reclaim.refund_requests.notification_uuid IS 'The CONSUMPTION_REQUEST notification: one request per notification, whatever Apple''s redeliveries.';
COMMENT ON COLUMN reclaim.refund_requests.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.refund_requests.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.refund_requests.original_transaction_id IS 'The subscriber (originalTransactionId).';
COMMENT ON COLUMN reclaim.refund_requests.transaction_id IS 'The transaction the customer asked Apple to refund: the answer is sent for it, and REFUND / REFUND_DECLINED name it.';
COMMENT ON COLUMN reclaim.refund_requests.product_id IS 'Its product.';
COMMENT ON COLUMN reclaim.refund_requests.product_type IS 'Apple''s transaction type, e.g. Auto-Renewable Subscription.';
COMMENT ON COLUMN reclaim.refund_requests.reason IS 'Apple''s consumptionRequestReason: UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL or OTHER.';
COMMENT ON COLUMN reclaim.refund_requests.requested_at IS 'When Apple signed the request; Apple asks for an answer within 12 hours of it.';
COMMENT ON COLUMN reclaim.refund_requests.arm IS 'policy (a policy matched), holdout (the control group: the facts of the policy that would have matched, or of refunds.default, without a refundPreference) or unmatched (no policy matched: refunds.default''s facts without a refundPreference).';
COMMENT ON COLUMN reclaim.refund_requests.policy_id IS 'The policy that matched (arm policy).';
COMMENT ON COLUMN reclaim.refund_requests.body IS 'The ConsumptionRequest sent (or to send) to Send Consumption Information, exactly; NULL when unanswered.';
COMMENT ON COLUMN reclaim.refund_requests.status IS 'pending (not yet accepted by Apple), sent (Apple answered 202), refused (Apple answered an error no retry cures: apple_error), expired (12 hours passed before it could be sent: not sent), unanswered (not sent because the answer would state a fact Reclaim does not know: apple_error says which).';
COMMENT ON COLUMN reclaim.refund_requests.apple_status IS 'The HTTP status of Apple''s last answer.';
COMMENT ON COLUMN reclaim.refund_requests.apple_error IS 'Apple''s error, named (e.g. 4000035 InvalidCustomerConsentedError), when refused, and the last failed attempt''s while pending (a 401 while a key is rotated); why it was not sent when expired or unanswered.';
COMMENT ON COLUMN reclaim.refund_requests.sent_at IS 'When Apple accepted the answer.';
COMMENT ON COLUMN reclaim.refund_requests.outcome IS 'refunded (REFUND) or declined (REFUND_DECLINED) for the transaction; NULL until Apple says.';
COMMENT ON COLUMN reclaim.refund_requests.outcome_at IS 'When Apple signed the outcome.';
COMMENT ON COLUMN reclaim.refund_requests.revocation_type IS 'For a refund: Apple''s revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE).';
COMMENT ON COLUMN reclaim.refund_requests.revocation_percentage IS 'For a prorated refund: Apple''s revocationPercentage, in milliunits.';
COMMENT ON COLUMN reclaim.refund_requests.created_at IS 'When Reclaim recorded the request.';
COMMENT ON COLUMN reclaim.refund_requests.free_trial_seen IS 'Whether a free trial appears on the transaction or in the stored history.';
COMMENT ON COLUMN reclaim.refund_requests.discount_redeemed IS 'Whether an offer (Apple''s offerType) priced the refunded period.';
COMMENT ON COLUMN reclaim.refund_requests.earlier_refunds IS 'REFUND notifications of this subscriber stored before the request.';
COMMENT ON COLUMN reclaim.refund_requests.original_purchase_date IS 'The subscription''s first purchase (originalPurchaseDate): tenure at requested_at.';
COMMENT ON COLUMN reclaim.refund_requests.purchase_date IS 'The refunded transaction''s purchaseDate.';
COMMENT ON COLUMN reclaim.refund_requests.storefront IS 'The refunded transaction''s storefront, as the policies saw it.';
COMMENT ON COLUMN reclaim.refund_requests.counterpart_policy IS 'For a held-out request: the policy whose conditions held (its facts were sent, without its preference), or (no policy); each policy is compared with these requests. NULL for other arms and for requests recorded before schema version 21.';

CREATE VIEW reclaim.refund_policy_rates AS
WITH arms AS (
    SELECT bundle_id, environment, CASE arm WHEN 'policy' THEN policy_id WHEN 'holdout' THEN '(holdout)' ELSE '(no policy)' END AS policy,
           count(*) AS requests, count(*) FILTER (WHERE status = 'sent') AS answered,
           count(*) FILTER (WHERE outcome = 'refunded') AS refunded, count(*) FILTER (WHERE outcome = 'declined') AS declined,
           count(*) FILTER (WHERE status = 'unanswered') AS unanswered
    FROM reclaim.refund_requests GROUP BY 1, 2, 3
), counterparts AS (
    -- Each policy's own control group: the held-out requests its conditions matched.
    SELECT bundle_id, environment, counterpart_policy AS policy,
           count(*) FILTER (WHERE outcome = 'refunded') AS refunded, count(*) FILTER (WHERE outcome = 'declined') AS declined
    FROM reclaim.refund_requests WHERE arm = 'holdout' AND counterpart_policy IS NOT NULL GROUP BY 1, 2, 3
)
SELECT a.bundle_id, a.environment, a.policy, a.requests, a.answered, a.refunded, a.declined,
       a.refunded::float8 / nullif(a.refunded + a.declined, 0) AS refund_rate, w.lower AS refund_rate_lower, w.upper AS refund_rate_upper,
       CASE WHEN h.refunded + h.declined > 0 AND a.refunded + a.declined > 0
            THEN a.refunded::float8 / (a.refunded + a.declined) - h.refunded::float8 / (h.refunded + h.declined) END AS difference,
       CASE WHEN h.refunded + h.declined > 0 AND a.refunded + a.declined > 0 THEN d.lower END AS difference_lower,
       CASE WHEN h.refunded + h.declined > 0 AND a.refunded + a.declined > 0 THEN d.upper END AS difference_upper,
       coalesce(h.refunded, 0) AS holdout_refunded, coalesce(h.declined, 0) AS holdout_declined, a.unanswered
FROM arms a
LEFT JOIN counterparts h ON h.bundle_id = a.bundle_id AND h.environment = a.environment AND h.policy = a.policy AND a.policy <> '(holdout)'
CROSS JOIN LATERAL reclaim.wilson_interval(a.refunded, a.refunded + a.declined) AS w
CROSS JOIN LATERAL reclaim.newcombe_interval(a.refunded, a.refunded + a.declined, coalesce(h.refunded, 0), coalesce(h.refunded + h.declined, 0)) AS d;
COMMENT ON VIEW reclaim.refund_policy_rates IS 'Per app, environment and policy (and the holdout, and requests no policy matched): requests, answers Apple accepted, and Apple''s decisions; the refund rate among decided requests with its 95% Wilson interval, and its difference from the rate of its own held-out counterparts (the held-out requests its conditions matched) with Newcombe''s 95% interval (policy minus holdout).';
COMMENT ON COLUMN reclaim.refund_policy_rates.difference IS 'refund_rate minus that of the held-out requests whose counterpart is this policy (for (no policy): the held-out requests no policy matched); NULL for the holdout row itself or without decided requests on both sides.';
COMMENT ON COLUMN reclaim.refund_policy_rates.holdout_refunded IS 'This policy''s held-out counterparts that Apple refunded.';
COMMENT ON COLUMN reclaim.refund_policy_rates.holdout_declined IS 'Those Apple declined.';
COMMENT ON COLUMN reclaim.refund_policy_rates.unanswered IS 'Requests not answered: the answer would have stated a fact Reclaim does not know (status unanswered).';
COMMENT ON COLUMN reclaim.refund_policy_rates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.refund_policy_rates.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.refund_policy_rates.policy IS 'The policy id, (holdout), or (no policy).';
COMMENT ON COLUMN reclaim.refund_policy_rates.requests IS 'CONSUMPTION_REQUESTs.';
COMMENT ON COLUMN reclaim.refund_policy_rates.answered IS 'Of those, answers Apple accepted (202).';
COMMENT ON COLUMN reclaim.refund_policy_rates.refunded IS 'Requests Apple refunded (REFUND).';
COMMENT ON COLUMN reclaim.refund_policy_rates.declined IS 'Requests Apple declined (REFUND_DECLINED).';
COMMENT ON COLUMN reclaim.refund_policy_rates.refund_rate IS 'refunded / (refunded + declined).';
COMMENT ON COLUMN reclaim.refund_policy_rates.refund_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.refund_policy_rates.refund_rate_upper IS 'Upper bound.';
COMMENT ON COLUMN reclaim.refund_policy_rates.difference_lower IS 'Its 95% Newcombe interval, lower bound: below 0 throughout means the policy lowers refunds.';
COMMENT ON COLUMN reclaim.refund_policy_rates.difference_upper IS 'Upper bound.';

-- The billing plan in the reports (schema version 28).
COMMENT ON COLUMN reclaim.campaign_decisions.billing_plan_type IS 'The subscription''s billingPlanType when decided: MONTHLY (12-month commitment) or BILLED_UPFRONT; NULL: unknown (no transaction named one, or decided before schema version 28).';
COMMENT ON COLUMN reclaim.cancel_sheet_decisions.billing_plan_type IS 'The subscription''s stored billingPlanType when decided (Apple''s realtime request names none); NULL: unknown.';
COMMENT ON COLUMN reclaim.refund_requests.billing_plan_type IS 'The refunded transaction''s billingPlanType; NULL: not named.';
COMMENT ON COLUMN reclaim.refund_requests.billing_period IS 'For a subscription: current (the refunded transaction''s period had not expired when Apple signed the request; for a 12-month commitment, Apple ends the commitment with such a refund) or past (it had); NULL: not a subscription, or no expiresDate.';

CREATE VIEW reclaim.campaign_funnel_by_plan AS
SELECT d.bundle_id,
       d.environment,
       d.campaign_id,
       coalesce(d.billing_plan_type, 'unknown')                   AS billing_plan_type,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped,
       count(o.id) + count(c.decision_id)                         AS offered,
       count(o.id) FILTER (WHERE o.delivered_at IS NOT NULL)      AS delivered,
       count(o.id) FILTER (WHERE o.state = 'redeemed') + count(c.redeemed_at) AS redeemed,
       count(o.id) FILTER (WHERE o.state = 'withdrawn')           AS withdrawn,
       count(o.id) FILTER (WHERE o.state = 'expired')             AS expired,
       count(c.decision_id)                                       AS codes_issued,
       count(c.redeemed_at)                                       AS codes_redeemed
FROM reclaim.campaign_decisions d
LEFT JOIN reclaim.offers o ON o.decision_id = d.id
LEFT JOIN reclaim.offer_codes c ON c.decision_id = d.id
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.campaign_funnel_by_plan IS 'campaign_funnel split by the subscription''s billing plan when decided: MONTHLY (12-month commitment), BILLED_UPFRONT, or unknown.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.decided IS 'Decisions (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.skipped IS 'Triggers a rule turned down.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.offered IS 'Offers issued: signed offers, and offer codes (offer.offerCodes).';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.redeemed IS 'Offers Apple reported as redeemed (a code''s redemption is inferred: see offer_codes.redeemed_at).';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.withdrawn IS 'Offers withdrawn.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.expired IS 'Offers that expired unredeemed.';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.codes_issued IS 'Of offered: offer codes issued (sent by the offer.issued webhook, not fetched by the app: delivered and shown count signed offers only).';
COMMENT ON COLUMN reclaim.campaign_funnel_by_plan.codes_redeemed IS 'Of redeemed: offer codes redeemed.';

CREATE VIEW reclaim.campaign_lift_by_plan AS
WITH subjects AS (
    SELECT DISTINCT ON (d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id)
           d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.outcome, d.decided_at,
           coalesce(d.billing_plan_type, 'unknown') AS billing_plan_type
    FROM reclaim.campaign_decisions d
    WHERE d.outcome IN ('offered', 'held_out')
    ORDER BY d.bundle_id, d.campaign_id, d.environment, d.original_transaction_id, d.decided_at),
counts AS (
    SELECT s.bundle_id, s.environment, s.campaign_id, s.billing_plan_type,
           count(*) FILTER (WHERE s.outcome = 'offered') AS treated,
           count(*) FILTER (WHERE s.outcome = 'held_out') AS held_out,
           count(*) FILTER (WHERE s.outcome = 'offered' AND sub.expires_at > s.decided_at + interval '30 days') AS treated_retained_30d,
           count(*) FILTER (WHERE s.outcome = 'held_out' AND sub.expires_at > s.decided_at + interval '30 days') AS held_out_retained_30d
    FROM subjects s
    LEFT JOIN reclaim.subscriptions sub
      ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id
    GROUP BY 1, 2, 3, 4)
SELECT c.bundle_id, c.environment, c.campaign_id, c.billing_plan_type, c.treated, c.held_out,
       c.treated_retained_30d, c.held_out_retained_30d,
       c.treated_retained_30d::float8 / nullif(c.treated, 0) - c.held_out_retained_30d::float8 / nullif(c.held_out, 0) AS retention_lift,
       l.lower AS retention_lift_lower, l.upper AS retention_lift_upper
FROM counts c
CROSS JOIN LATERAL reclaim.newcombe_interval(c.treated_retained_30d, c.treated, c.held_out_retained_30d, c.held_out) AS l;
COMMENT ON VIEW reclaim.campaign_lift_by_plan IS 'Per campaign, environment and billing plan (when first decided): subscribers treated against held out, with 30-day retention measured from the decision (not the trigger: a decision deferred to commitmentLead before a 12-month commitment''s end is measured from then, since the customer pays until the end whatever is offered), and the retention lift with its 95% Newcombe interval.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.treated IS 'Subscribers whose first decision of the campaign offered.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.held_out IS 'Subscribers whose first decision of the campaign held them out.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past that decision.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past that decision.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift IS 'Treated minus held-out retention.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.campaign_lift_by_plan.retention_lift_upper IS 'Its 95% Newcombe interval, upper bound.';

CREATE VIEW reclaim.cancel_sheet_save_rates_by_plan AS
WITH firsts AS (
    SELECT d.bundle_id, d.environment, d.campaign_id, coalesce(d.billing_plan_type, 'unknown') AS billing_plan_type, d.outcome, d.save_outcome
    FROM reclaim.cancel_sheet_decisions d
    WHERE d.repeat_of IS NULL AND NOT d.shadow AND d.outcome IN ('answered', 'held_out')),
arms AS (
    SELECT bundle_id, environment, campaign_id, billing_plan_type,
           count(*) FILTER (WHERE outcome = 'answered' AND save_outcome = 'saved') AS saved,
           count(*) FILTER (WHERE outcome = 'answered' AND save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE outcome = 'held_out' AND save_outcome = 'saved') AS held_out_saved,
           count(*) FILTER (WHERE outcome = 'held_out' AND save_outcome = 'lost') AS held_out_lost
    FROM firsts GROUP BY 1, 2, 3, 4)
SELECT a.bundle_id, a.environment, a.campaign_id, a.billing_plan_type, a.saved, a.lost,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       a.held_out_saved, a.held_out_lost, a.held_out_saved::float8 / nullif(a.held_out_saved + a.held_out_lost, 0) AS held_out_save_rate,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - a.held_out_saved::float8 / nullif(a.held_out_saved + a.held_out_lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper
FROM arms a
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, a.held_out_saved, a.held_out_saved + a.held_out_lost) AS l;
COMMENT ON VIEW reclaim.cancel_sheet_save_rates_by_plan IS 'Each cancel-sheet campaign (all arms together) against its holdout, per billing plan when decided: first decisions settled saved or lost, the save rate with a 95% Wilson interval and the lift over the holdout with a 95% Newcombe interval. cancel_sheet_save_rates splits by arm instead.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.campaign_id IS 'The cancel-sheet campaign.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.billing_plan_type IS 'MONTHLY, BILLED_UPFRONT, another value Apple sent, or unknown.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.saved IS 'Answered first decisions settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lost IS 'Answered first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate IS 'saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_saved IS 'Held-out first decisions settled as saved.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_lost IS 'Held-out first decisions settled as lost.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.held_out_save_rate IS 'The holdout''s saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift IS 'save_rate minus held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_sheet_save_rates_by_plan.lift_upper IS 'Its 95% Newcombe interval, upper bound.';

-- ---------------------------------------------------------------------------------------------
-- The audit log.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE reclaim.audit_log (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            timestamptz NOT NULL,
    actor_kind    text        NOT NULL CHECK (actor_kind IN ('key', 'command', 'process')),
    actor_key_id  uuid,
    actor         text        NOT NULL,
    action        text        NOT NULL,
    target        text,
    outcome       text        NOT NULL,
    detail        text,
    previous_hash bytea       NOT NULL CHECK (octet_length(previous_hash) = 32),
    hash          bytea       NOT NULL UNIQUE CHECK (octet_length(hash) = 32)
);
CREATE INDEX audit_log_at_idx ON reclaim.audit_log (at);
CREATE INDEX audit_log_target_idx ON reclaim.audit_log (target) WHERE target IS NOT NULL;
COMMENT ON TABLE reclaim.audit_log IS 'Every privileged action, appended and never changed: who (a key, or a command line''s actor), what, on what, with what outcome. Each row''s hash covers the row and the previous row''s hash, so an edit or a deletion breaks the chain (reclaim audit --verify). Subscriber targets are pseudonymised when written, so reclaim subscribers forget has nothing to redact here.';
COMMENT ON COLUMN reclaim.audit_log.id IS 'The row''s position in the chain.';
COMMENT ON COLUMN reclaim.audit_log.at IS 'When the action was recorded (whole milliseconds: the hash covers them).';
COMMENT ON COLUMN reclaim.audit_log.actor_kind IS 'key (an HTTP request or a console session: actor_key_id), command (a reclaim command line: --actor, RECLAIM_ACTOR or the operating-system user) or process (reclaim serve starting).';
COMMENT ON COLUMN reclaim.audit_log.actor_key_id IS 'The key that acted (reclaim.api_keys.id); NULL for a command line, a process, or a sign-in with an unknown key.';
COMMENT ON COLUMN reclaim.audit_log.actor IS 'The key''s role and name (admin:ops-alice), the command line''s actor, or the process''s host and pid.';
COMMENT ON COLUMN reclaim.audit_log.action IS 'What was done: grant.create, campaign.pause, subscriber.read, subscriber.forget, key.create, console.sign-in, process.start, … (docs/operations.md lists them).';
COMMENT ON COLUMN reclaim.audit_log.target IS 'What it was done to: a campaign (campaign:<id>), a key (key:<id>), an app (app:<bundle id>), or a subscriber as a keyed hash (subscriber:<HMAC-SHA-256 prefix>), never the id itself.';
COMMENT ON COLUMN reclaim.audit_log.outcome IS 'ok, refused (the role may not, or the request was invalid), failed, or for a dry run dry-run.';
COMMENT ON COLUMN reclaim.audit_log.detail IS 'A short note: the reason given, the config''s SHA-256 for process.start, the count a command affected. Never a subscriber''s identifier or a key.';
COMMENT ON COLUMN reclaim.audit_log.previous_hash IS 'The hash of the row before (32 zero bytes for the first).';
COMMENT ON COLUMN reclaim.audit_log.hash IS 'SHA-256 over previous_hash and this row''s fields, each length-prefixed (AuditLog.rowHash).';

CREATE TABLE reclaim.audit_pseudonym_key (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    secret     bytea       NOT NULL CHECK (octet_length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE reclaim.audit_pseudonym_key IS 'The one secret the audit log''s subscriber targets are keyed with (HMAC-SHA-256), made by Reclaim on first use: reclaim audit --target finds a subscriber''s rows by computing it again; without the secret a pseudonym names nobody.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.id IS 'Always true: one row.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.secret IS '32 random bytes.';
COMMENT ON COLUMN reclaim.audit_pseudonym_key.created_at IS 'When it was made.';

-- ---------------------------------------------------------------------------------------------
-- Stops of a whole app.
-- ---------------------------------------------------------------------------------------------
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

CREATE VIEW reclaim.cancel_flow_outcomes AS
SELECT d.id, d.bundle_id, d.environment, d.original_transaction_id, d.campaign_id, coalesce(d.variant_id, '') AS variant_id, d.outcome,
       coalesce(d.survey_reason, 'none') AS survey_reason, d.decided_at, d.decided_at + d.save_window AS settles_at,
       CASE WHEN l.at IS NOT NULL THEN 'lost' WHEN now() >= d.decided_at + d.save_window THEN 'saved' ELSE 'open' END AS save_outcome,
       l.at AS lost_at, l.notification AS lost_by
FROM reclaim.cancel_flow_decisions d
-- Lost: Apple's notification that auto-renew went off, or of a refund, within the window (a CONSUMPTION_REQUEST is a
-- request Apple may decline, and a granted one sends REFUND). Reclaim received it after the flow, or Apple signed it
-- after: news after the flow.
LEFT JOIN LATERAL (
    SELECT n.signed_date AS at, n.notification_type || coalesce('/' || n.subtype, '') AS notification
    FROM reclaim.notifications n
    WHERE n.bundle_id = d.bundle_id AND n.environment = d.environment AND n.original_transaction_id = d.original_transaction_id
      AND n.source = 'apple'
      AND (n.signed_date >= d.decided_at OR n.received_at >= d.decided_at) AND n.signed_date < d.decided_at + d.save_window
      AND ((n.notification_type = 'DID_CHANGE_RENEWAL_STATUS' AND n.subtype = 'AUTO_RENEW_DISABLED') OR n.notification_type = 'REFUND')
    ORDER BY n.signed_date
    LIMIT 1
) l ON true
WHERE d.repeat_of IS NULL AND d.outcome IN ('answered', 'held_out');
COMMENT ON VIEW reclaim.cancel_flow_outcomes IS 'Each first cancel-flow decision that answered or held out, with its save outcome from Apple''s notifications: lost when auto-renew was turned off (DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED) or a refund was granted (REFUND) within the save window, saved when the window ended without either, open until then. A CONSUMPTION_REQUEST alone does not count: Apple may decline it.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.id IS 'The decision (reclaim.cancel_flow_decisions.id).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.original_transaction_id IS 'The subscription.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.campaign_id IS 'The cancel-flow campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.variant_id IS 'The arm (empty for the holdout and a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.outcome IS 'answered or held_out.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.survey_reason IS 'The survey answer; none for no answer.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.decided_at IS 'When the app was answered.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.settles_at IS 'The end of the save window.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.save_outcome IS 'lost, saved, or open (the window runs and nothing was lost yet).';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.lost_at IS 'lost: when Apple signed the notification that lost it.';
COMMENT ON COLUMN reclaim.cancel_flow_outcomes.lost_by IS 'lost: that notification, TYPE/SUBTYPE.';

CREATE VIEW reclaim.cancel_flow_save_rates AS
WITH arms AS (
    SELECT bundle_id, environment, campaign_id, variant_id,
           CASE WHEN grouping(survey_reason) = 1 THEN '*' ELSE survey_reason END AS survey_reason,
           count(*) FILTER (WHERE save_outcome = 'saved') AS saved, count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome = 'open') AS open
    FROM reclaim.cancel_flow_outcomes WHERE outcome = 'answered'
    GROUP BY GROUPING SETS ((bundle_id, environment, campaign_id, variant_id, survey_reason), (bundle_id, environment, campaign_id, variant_id))
), held AS (
    SELECT bundle_id, environment, campaign_id, CASE WHEN grouping(survey_reason) = 1 THEN '*' ELSE survey_reason END AS survey_reason,
           count(*) FILTER (WHERE save_outcome = 'saved') AS saved, count(*) FILTER (WHERE save_outcome = 'lost') AS lost,
           count(*) FILTER (WHERE save_outcome = 'open') AS open
    FROM reclaim.cancel_flow_outcomes WHERE outcome = 'held_out'
    GROUP BY GROUPING SETS ((bundle_id, environment, campaign_id, survey_reason), (bundle_id, environment, campaign_id))
)
SELECT a.bundle_id, a.environment, a.campaign_id, a.variant_id, a.survey_reason, a.saved, a.lost, a.open,
       a.saved::float8 / nullif(a.saved + a.lost, 0) AS save_rate, s.lower AS save_rate_lower, s.upper AS save_rate_upper,
       (a.saved + a.open)::float8 / nullif(a.saved + a.lost + a.open, 0) AS kept_rate, k.lower AS kept_rate_lower, k.upper AS kept_rate_upper,
       coalesce(h.saved, 0) AS held_out_saved, coalesce(h.lost, 0) AS held_out_lost, coalesce(h.open, 0) AS held_out_open,
       h.saved::float8 / nullif(h.saved + h.lost, 0) AS held_out_save_rate,
       (h.saved + h.open)::float8 / nullif(h.saved + h.lost + h.open, 0) AS held_out_kept_rate, o.lower AS held_out_kept_rate_lower,
       o.upper AS held_out_kept_rate_upper,
       a.saved::float8 / nullif(a.saved + a.lost, 0) - h.saved::float8 / nullif(h.saved + h.lost, 0) AS lift,
       l.lower AS lift_lower, l.upper AS lift_upper,
       (a.saved + a.open)::float8 / nullif(a.saved + a.lost + a.open, 0) - (h.saved + h.open)::float8 / nullif(h.saved + h.lost + h.open, 0) AS kept_lift,
       kl.lower AS kept_lift_lower, kl.upper AS kept_lift_upper
FROM arms a
LEFT JOIN held h USING (bundle_id, environment, campaign_id, survey_reason)
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved, a.saved + a.lost) AS s
CROSS JOIN LATERAL reclaim.wilson_interval(a.saved + a.open, a.saved + a.lost + a.open) AS k
CROSS JOIN LATERAL reclaim.wilson_interval(coalesce(h.saved + h.open, 0), coalesce(h.saved + h.lost + h.open, 0)) AS o
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved, a.saved + a.lost, coalesce(h.saved, 0), coalesce(h.saved + h.lost, 0)) AS l
CROSS JOIN LATERAL reclaim.newcombe_interval(a.saved + a.open, a.saved + a.lost + a.open, coalesce(h.saved + h.open, 0),
                                             coalesce(h.saved + h.lost + h.open, 0)) AS kl;
COMMENT ON VIEW reclaim.cancel_flow_save_rates IS 'Each cancel-flow campaign''s arm against its holdout, per survey answer and for all answers (survey_reason *): first decisions saved, lost or still open (reclaim.cancel_flow_outcomes); the settled save rate with its 95% Wilson interval and its lift over the holdout with a 95% Newcombe interval, and the same for the kept rate (not lost so far: saved or open), which reads before the windows end. The holdout was shown nothing and went on to Apple''s sheet.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.environment IS 'Production or Sandbox; compare within one.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.campaign_id IS 'The cancel-flow campaign.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.variant_id IS 'The arm (empty for a campaign without variants).';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.survey_reason IS 'The survey answer (none for no answer), or * for every answer.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.saved IS 'First decisions of the arm whose window ended without a loss.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lost IS 'First decisions of the arm lost: auto-renew turned off, or refunded, within the window.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.open IS 'First decisions of the arm whose window runs, nothing lost yet.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate IS 'saved / (saved + lost): settled decisions only.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.save_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate IS '(saved + open) / (saved + lost + open): not lost so far.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_saved IS 'The campaign''s held-out first decisions (of this survey answer) saved.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_lost IS 'Held-out first decisions lost.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_open IS 'Held-out first decisions still open.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_save_rate IS 'The holdout''s saved / (saved + lost).';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate IS 'The holdout''s (saved + open) / all.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate_lower IS 'Its 95% Wilson interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.held_out_kept_rate_upper IS 'Its 95% Wilson interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift IS 'save_rate - held_out_save_rate.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.lift_upper IS 'Its 95% Newcombe interval, upper bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift IS 'kept_rate - held_out_kept_rate.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift_lower IS 'Its 95% Newcombe interval, lower bound.';
COMMENT ON COLUMN reclaim.cancel_flow_save_rates.kept_lift_upper IS 'Its 95% Newcombe interval, upper bound.';
