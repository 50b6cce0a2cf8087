-- Upgrade of schema version 2 to 3: subscription state for campaigns, campaign decisions, offers
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- with their lifecycle, and redemptions.
--
-- Up to version 2 nothing wrote reclaim.campaigns, reclaim.offers or reclaim.offer_events, so
-- offers and offer_events are recreated in their new shape; subscriptions and campaigns keep
-- their rows and gain columns.
--
-- reclaim-schema-version: 3

ALTER TABLE reclaim.subscriptions
    ADD COLUMN subscription_group_id    text,
    ADD COLUMN auto_renew_product_id    text,
    ADD COLUMN expiration_intent        smallint,
    ADD COLUMN in_billing_retry         boolean,
    ADD COLUMN grace_period_expires_at  timestamptz,
    ADD COLUMN eligible_win_back_offer_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN storefront               text,
    ADD COLUMN first_purchase_at        timestamptz,
    ADD COLUMN last_transaction_id      text,
    DROP CONSTRAINT subscriptions_status_check,
    ADD CONSTRAINT subscriptions_status_check
        CHECK (status IN ('active', 'expired', 'billing_retry', 'grace_period', 'revoked', 'refunded', 'unknown'));
COMMENT ON COLUMN reclaim.subscriptions.status IS 'active, expired, billing_retry, grace_period, revoked, refunded (REFUND notification), or unknown.';
COMMENT ON COLUMN reclaim.subscriptions.subscription_group_id IS 'subscriptionGroupIdentifier of the latest transaction.';
COMMENT ON COLUMN reclaim.subscriptions.auto_renew_product_id IS 'The product the subscription renews to (renewal info autoRenewProductId).';
COMMENT ON COLUMN reclaim.subscriptions.expiration_intent IS 'Why it expired (renewal info expirationIntent): 1 customer cancelled, 2 billing error, 3 declined a price increase, 4 product not available, 5 other; NULL while it has not expired.';
COMMENT ON COLUMN reclaim.subscriptions.in_billing_retry IS 'Whether Apple is still trying to bill (renewal info isInBillingRetryPeriod).';
COMMENT ON COLUMN reclaim.subscriptions.grace_period_expires_at IS 'End of the billing grace period, if in one (renewal info gracePeriodExpiresDate).';
COMMENT ON COLUMN reclaim.subscriptions.eligible_win_back_offer_ids IS 'Win-back offers Apple itself lists for this subscriber (renewal info eligibleWinBackOfferIds), best first; campaigns can stand aside for them.';
COMMENT ON COLUMN reclaim.subscriptions.storefront IS 'Three-letter App Store storefront of the latest transaction, e.g. USA.';
COMMENT ON COLUMN reclaim.subscriptions.first_purchase_at IS 'originalPurchaseDate: when the subscriber first bought; tenure is measured from it.';
COMMENT ON COLUMN reclaim.subscriptions.last_transaction_id IS 'transactionId of the latest transaction applied.';

ALTER TABLE reclaim.campaigns
    ADD COLUMN max_offers_per_subscriber integer,
    ADD COLUMN starts_at        timestamptz,
    ADD COLUMN ends_at          timestamptz,
    ADD COLUMN stand_aside_for_win_back boolean NOT NULL DEFAULT true,
    ADD COLUMN conditions       jsonb       NOT NULL DEFAULT '{}'::jsonb;
COMMENT ON COLUMN reclaim.campaigns.max_offers_per_subscriber IS 'Most offers of this campaign one subscriber ever gets; NULL for no limit.';
COMMENT ON COLUMN reclaim.campaigns.starts_at IS 'Notifications signed before this do not trigger the campaign; NULL for no start.';
COMMENT ON COLUMN reclaim.campaigns.ends_at IS 'Notifications signed at or after this do not trigger the campaign; NULL for no end.';
COMMENT ON COLUMN reclaim.campaigns.stand_aside_for_win_back IS 'Skip subscribers for whom Apple already lists win-back offers (eligibleWinBackOfferIds).';
COMMENT ON COLUMN reclaim.campaigns.conditions IS 'Conditions from the config as JSON: products, minimumTenureSeconds, expirationIntents, storefronts.';

DROP VIEW reclaim.campaign_funnel;
DROP TABLE reclaim.offer_events;
DROP TABLE reclaim.offers;

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
COMMENT ON COLUMN reclaim.campaign_decisions.decided_at IS 'When the worker decided.';

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
    CHECK (decision_id IS NOT NULL OR grant_id IS NOT NULL)
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
    recorded_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX offer_redemptions_redeemed_idx ON reclaim.offer_redemptions (redeemed_at);
COMMENT ON TABLE reclaim.offer_redemptions IS 'Every promotional-offer purchase Apple reported (OFFER_REDEEMED, SUBSCRIBED or DID_RENEW with offerType 2), whether or not Reclaim issued the offer.';
COMMENT ON COLUMN reclaim.offer_redemptions.notification_uuid IS 'The notification that reported it.';
COMMENT ON COLUMN reclaim.offer_redemptions.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_redemptions.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.offer_redemptions.original_transaction_id IS 'The subscriber''s subscription.';
COMMENT ON COLUMN reclaim.offer_redemptions.transaction_id IS 'The redeeming transaction.';
COMMENT ON COLUMN reclaim.offer_redemptions.product_id IS 'The product bought.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_identifier IS 'The promotional offer id the transaction carries.';
COMMENT ON COLUMN reclaim.offer_redemptions.offer_id IS 'The Reclaim offer it redeemed; NULL when Reclaim never issued that offer to this subscriber (e.g. the app signed one elsewhere).';
COMMENT ON COLUMN reclaim.offer_redemptions.price IS 'Price paid in milli-units of currency.';
COMMENT ON COLUMN reclaim.offer_redemptions.currency IS 'ISO 4217 currency.';
COMMENT ON COLUMN reclaim.offer_redemptions.redeemed_at IS 'Transaction purchaseDate (the notification''s signedDate when absent).';
COMMENT ON COLUMN reclaim.offer_redemptions.recorded_at IS 'When Reclaim recorded it.';

CREATE TABLE reclaim.offer_events (
    offer_id    uuid        NOT NULL REFERENCES reclaim.offers (id),
    event       text        NOT NULL CHECK (event IN ('shown', 'dismissed', 'purchase_started')),
    occurred_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (offer_id, event)
);
COMMENT ON TABLE reclaim.offer_events IS 'What the app reported about an offer (POST /v1/offers/{id}/events); each event once per offer.';
COMMENT ON COLUMN reclaim.offer_events.offer_id IS 'The offer.';
COMMENT ON COLUMN reclaim.offer_events.event IS 'shown, dismissed or purchase_started.';
COMMENT ON COLUMN reclaim.offer_events.occurred_at IS 'When Reclaim first recorded it.';

CREATE VIEW reclaim.campaign_funnel AS
SELECT d.bundle_id,
       d.campaign_id,
       count(*)                                                   AS decided,
       count(*) FILTER (WHERE d.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE d.outcome = 'skipped')              AS skipped,
       count(o.id)                                                AS offered,
       count(o.id) FILTER (WHERE o.delivered_at IS NOT NULL)      AS delivered,
       count(o.id) FILTER (WHERE EXISTS (SELECT 1 FROM reclaim.offer_events e WHERE e.offer_id = o.id AND e.event = 'shown')) AS shown,
       count(o.id) FILTER (WHERE o.state = 'redeemed')            AS redeemed,
       count(o.id) FILTER (WHERE o.state = 'withdrawn')           AS withdrawn,
       count(o.id) FILTER (WHERE o.state = 'expired')             AS expired
FROM reclaim.campaign_decisions d
LEFT JOIN reclaim.offers o ON o.decision_id = d.id
GROUP BY d.bundle_id, d.campaign_id;
COMMENT ON VIEW reclaim.campaign_funnel IS 'Per campaign, all time: decisions and what became of their offers. Grants are not decisions and do not appear here.';
COMMENT ON COLUMN reclaim.campaign_funnel.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_funnel.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_funnel.decided IS 'Times a notification triggered the campaign (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.campaign_funnel.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.campaign_funnel.skipped IS 'Triggers a rule turned down (see campaign_decisions.reason).';
COMMENT ON COLUMN reclaim.campaign_funnel.offered IS 'Offers issued.';
COMMENT ON COLUMN reclaim.campaign_funnel.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.campaign_funnel.shown IS 'Offers the app reported as shown.';
COMMENT ON COLUMN reclaim.campaign_funnel.redeemed IS 'Offers Apple reported as redeemed.';
COMMENT ON COLUMN reclaim.campaign_funnel.withdrawn IS 'Offers withdrawn (superseded, or the subscriber came back without them).';
COMMENT ON COLUMN reclaim.campaign_funnel.expired IS 'Offers that reached deliverable_until unredeemed.';
