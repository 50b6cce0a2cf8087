-- Upgrade of schema version 19 to 20: Apple's refund requests (CONSUMPTION_REQUEST) answered by policy, and what came
-- of each.
-- reclaim-additive: yes
-- (Additive: a new table and view; version 19's binaries neither read nor write them.)
--
-- reclaim-schema-version: 20

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
    body                     jsonb       NOT NULL,
    status                   text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'refused', 'expired')),
    apple_status             integer,
    apple_error              text,
    sent_at                  timestamptz,
    outcome                  text        CHECK (outcome IN ('refunded', 'declined')),
    outcome_at               timestamptz,
    revocation_type          text,
    revocation_percentage    integer,
    created_at               timestamptz NOT NULL DEFAULT now()
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
COMMENT ON COLUMN reclaim.refund_requests.arm IS 'policy (a policy matched), holdout (the control group: the facts without a refundPreference) or unmatched (no policy matched: the facts without a refundPreference).';
COMMENT ON COLUMN reclaim.refund_requests.policy_id IS 'The policy that matched (arm policy).';
COMMENT ON COLUMN reclaim.refund_requests.body IS 'The ConsumptionRequest sent (or to send) to Send Consumption Information, exactly.';
COMMENT ON COLUMN reclaim.refund_requests.status IS 'pending (not yet accepted by Apple), sent (Apple answered 202), refused (Apple answered an error no retry cures: apple_error), expired (12 hours passed before it could be sent: not sent).';
COMMENT ON COLUMN reclaim.refund_requests.apple_status IS 'The HTTP status of Apple''s last answer.';
COMMENT ON COLUMN reclaim.refund_requests.apple_error IS 'Apple''s error, named (e.g. 4000035 InvalidCustomerConsentedError), when refused.';
COMMENT ON COLUMN reclaim.refund_requests.sent_at IS 'When Apple accepted the answer.';
COMMENT ON COLUMN reclaim.refund_requests.outcome IS 'refunded (REFUND) or declined (REFUND_DECLINED) for the transaction; NULL until Apple says.';
COMMENT ON COLUMN reclaim.refund_requests.outcome_at IS 'When Apple signed the outcome.';
COMMENT ON COLUMN reclaim.refund_requests.revocation_type IS 'For a refund: Apple''s revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE).';
COMMENT ON COLUMN reclaim.refund_requests.revocation_percentage IS 'For a prorated refund: Apple''s revocationPercentage, in milliunits.';
COMMENT ON COLUMN reclaim.refund_requests.created_at IS 'When Reclaim recorded the request.';

CREATE VIEW reclaim.refund_policy_rates AS
WITH arms AS (
    SELECT bundle_id, environment, CASE arm WHEN 'policy' THEN policy_id WHEN 'holdout' THEN '(holdout)' ELSE '(no policy)' END AS policy,
           count(*) AS requests, count(*) FILTER (WHERE status = 'sent') AS answered,
           count(*) FILTER (WHERE outcome = 'refunded') AS refunded, count(*) FILTER (WHERE outcome = 'declined') AS declined
    FROM reclaim.refund_requests GROUP BY 1, 2, 3
), holdout AS (
    SELECT bundle_id, environment, refunded, refunded + declined AS decided FROM arms WHERE policy = '(holdout)'
)
SELECT a.bundle_id, a.environment, a.policy, a.requests, a.answered, a.refunded, a.declined,
       a.refunded::float8 / nullif(a.refunded + a.declined, 0) AS refund_rate, w.lower AS refund_rate_lower, w.upper AS refund_rate_upper,
       CASE WHEN a.policy <> '(holdout)' AND h.decided > 0 AND a.refunded + a.declined > 0
            THEN a.refunded::float8 / (a.refunded + a.declined) - h.refunded::float8 / h.decided END AS difference,
       CASE WHEN a.policy <> '(holdout)' AND h.decided > 0 AND a.refunded + a.declined > 0 THEN d.lower END AS difference_lower,
       CASE WHEN a.policy <> '(holdout)' AND h.decided > 0 AND a.refunded + a.declined > 0 THEN d.upper END AS difference_upper
FROM arms a
LEFT JOIN holdout h ON h.bundle_id = a.bundle_id AND h.environment = a.environment
CROSS JOIN LATERAL reclaim.wilson_interval(a.refunded, a.refunded + a.declined) AS w
CROSS JOIN LATERAL reclaim.newcombe_interval(a.refunded, a.refunded + a.declined, coalesce(h.refunded, 0), coalesce(h.decided, 0)) AS d;
COMMENT ON VIEW reclaim.refund_policy_rates IS 'Per app, environment and policy (and the holdout, and requests no policy matched): requests, answers Apple accepted, and Apple''s decisions; the refund rate among decided requests with its 95% Wilson interval, and its difference from the holdout''s with Newcombe''s 95% interval (policy minus holdout).';
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
COMMENT ON COLUMN reclaim.refund_policy_rates.difference IS 'refund_rate minus the holdout''s; NULL for the holdout itself or without decided requests on both sides.';
COMMENT ON COLUMN reclaim.refund_policy_rates.difference_lower IS 'Its 95% Newcombe interval, lower bound: below 0 throughout means the policy lowers refunds.';
COMMENT ON COLUMN reclaim.refund_policy_rates.difference_upper IS 'Upper bound.';
