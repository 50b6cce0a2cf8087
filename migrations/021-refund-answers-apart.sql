-- Upgrade of schema version 20 to 21: refund answers on call lanes of their own, requests not answered when the answer
-- would state a fact Reclaim does not know, and each refund policy compared with its own held-out counterparts.
-- reclaim-additive: yes
-- (Additive: nullable columns, a status and an index added, a NOT NULL dropped, view columns appended; version 20's
-- binaries neither write the new values nor read the new columns, and their rows stay valid.)
--
-- reclaim-schema-version: 21

-- The call lanes' claim (one job of a kind that calls Apple, oldest first), apart from the batches' index.
CREATE INDEX jobs_call_claim_idx ON reclaim.jobs (run_at, id)
    WHERE state IN ('available', 'retryable') AND target IS NULL AND kind = 'refund_answer';

ALTER TABLE reclaim.refund_requests
    ALTER COLUMN body DROP NOT NULL,
    DROP CONSTRAINT refund_requests_status_check,
    ADD CONSTRAINT refund_requests_status_check CHECK (status IN ('pending', 'sent', 'refused', 'expired', 'unanswered')),
    ADD COLUMN counterpart_policy text,
    ADD COLUMN storefront text,
    ADD COLUMN purchase_date timestamptz,
    ADD COLUMN original_purchase_date timestamptz,
    ADD COLUMN earlier_refunds integer,
    ADD COLUMN discount_redeemed boolean,
    ADD COLUMN free_trial_seen boolean;

COMMENT ON COLUMN reclaim.refund_requests.arm IS 'policy (a policy matched), holdout (the control group: the facts of the policy that would have matched, or of refunds.default, without a refundPreference) or unmatched (no policy matched: refunds.default''s facts without a refundPreference).';
COMMENT ON COLUMN reclaim.refund_requests.body IS 'The ConsumptionRequest sent (or to send) to Send Consumption Information, exactly; NULL when unanswered.';
COMMENT ON COLUMN reclaim.refund_requests.status IS 'pending (not yet accepted by Apple), sent (Apple answered 202), refused (Apple answered an error no retry cures: apple_error), expired (12 hours passed before it could be sent: not sent), unanswered (not sent because the answer would state a fact Reclaim does not know: apple_error says which).';
COMMENT ON COLUMN reclaim.refund_requests.apple_error IS 'Apple''s error, named (e.g. 4000035 InvalidCustomerConsentedError), when refused, and the last failed attempt''s while pending (a 401 while a key is rotated); why it was not sent when expired or unanswered.';
COMMENT ON COLUMN reclaim.refund_requests.counterpart_policy IS 'For a held-out request: the policy whose conditions held (its facts were sent, without its preference), or (no policy); each policy is compared with these requests. NULL for other arms and for requests recorded before schema version 21.';
COMMENT ON COLUMN reclaim.refund_requests.storefront IS 'The refunded transaction''s storefront, as the policies saw it.';
COMMENT ON COLUMN reclaim.refund_requests.purchase_date IS 'The refunded transaction''s purchaseDate.';
COMMENT ON COLUMN reclaim.refund_requests.original_purchase_date IS 'The subscription''s first purchase (originalPurchaseDate): tenure at requested_at.';
COMMENT ON COLUMN reclaim.refund_requests.earlier_refunds IS 'REFUND notifications of this subscriber stored before the request.';
COMMENT ON COLUMN reclaim.refund_requests.discount_redeemed IS 'Whether an offer (Apple''s offerType) priced the refunded period.';
COMMENT ON COLUMN reclaim.refund_requests.free_trial_seen IS 'Whether a free trial appears on the transaction or in the stored history.';

CREATE OR REPLACE VIEW reclaim.refund_policy_rates AS
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
