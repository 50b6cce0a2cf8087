-- Upgrade of schema version 30 to 31: one-time-use offer codes (reclaim codes import), handed out by campaigns with
-- offer.offerCodes, one per offered decision, sent by the offer.issued webhook; a redemption (offerType 3 of a pool's
-- offer) marks the code issued to that subscriber redeemed. The funnel and lift views count codes with offers.
-- reclaim-additive: yes
-- (Additive: new tables, a nullable column, views with columns appended and counts that are unchanged where no code
-- was ever issued; version 30's binaries name none of them.)
--
-- reclaim-schema-version: 31

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

ALTER TABLE reclaim.campaign_decisions ADD COLUMN apple_win_back_listed boolean;
COMMENT ON COLUMN reclaim.campaign_decisions.apple_win_back_listed IS 'Whether Apple listed win-back offers for the subscriber when decided (renewal info''s eligibleWinBackOfferIds not empty): a campaign that stands aside for them skipped (standing aside), one with standAsideForWinBack: false decided beside them. NULL for decisions before schema 31.';
ALTER TABLE reclaim.offer_redemptions ADD COLUMN code_decision_id uuid;
COMMENT ON COLUMN reclaim.offer_redemptions.code_decision_id IS 'offerType 3 of a pool''s offer (reclaim.offer_code_pools): the decision whose code the subscriber was given, the redemption inferred from it (Apple names the offer, not the code); NULL when Reclaim gave this subscriber no code of the offer.';

-- Whether a subscriber redeemed an offer code a campaign gave them: the lift views' redemptions of code campaigns.
CREATE FUNCTION reclaim.code_redeemed(bundle text, env text, campaign text, original_transaction text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM reclaim.offer_codes c JOIN reclaim.campaign_decisions d ON d.id = c.decision_id
                   WHERE c.bundle_id = bundle AND c.environment = env AND c.original_transaction_id = original_transaction
                     AND d.campaign_id = campaign AND c.redeemed_at IS NOT NULL)
$$;
COMMENT ON FUNCTION reclaim.code_redeemed(text, text, text, text) IS 'Whether the subscriber redeemed an offer code of the campaign (offer_codes.redeemed_at, inferred from the offer''s redemption).';






CREATE OR REPLACE VIEW reclaim.campaign_funnel AS
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

CREATE OR REPLACE VIEW reclaim.offer_funnel_daily AS
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

CREATE OR REPLACE VIEW reclaim.campaign_funnel_by_plan AS
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

CREATE OR REPLACE VIEW reclaim.campaign_lift AS
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



CREATE OR REPLACE FUNCTION reclaim.campaign_variant_counts_since(since timestamptz)
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
