-- Upgrade of schema version 32 to 33: outage make-goods (Apple's Extend Subscription Renewal Dates for All Active
-- Subscribers, `reclaim extensions all`) with their status and summary notification, and Set App Account Token
-- calls (apps[].setAppAccountToken); make_goods_daily counts make-goods by kind.
-- reclaim-additive: yes
-- (Additive: two new tables, an index and a view; version 32's binaries name none of them. A version-32 worker that claims
-- an app_account_token job has no handler for it: the job is retried, and runs on a version-33 worker.)
--
-- reclaim-schema-version: 33

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

-- The call lanes' claim of Set App Account Token calls, as jobs_call_claim_idx is refund answers'.
CREATE INDEX jobs_account_token_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'app_account_token';
