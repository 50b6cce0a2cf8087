-- Upgrade of schema version 14 to 15: offer.issued webhooks are queued by a statement-level trigger, one set-based
-- insert for all the offers a statement wrote, where a row trigger ran once per offer (20,000 offers with one
-- webhook: 7.1-9.2 s became 2.5 s, the insert alone 1.0-1.4 s). The events and their payloads are unchanged.
-- reclaim-additive: yes
-- (Additive: version 14's binaries write offers as before and get the same webhook jobs.)
--
-- reclaim-schema-version: 15

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

DROP TRIGGER offers_issued_webhooks ON reclaim.offers;
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

CREATE OR REPLACE FUNCTION reclaim.offer_webhooks() RETURNS trigger
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
