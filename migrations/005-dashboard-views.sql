-- Upgrade of schema version 4 to 5: views for dashboards (see docs/dashboards.md).
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
--
-- reclaim-schema-version: 5

CREATE VIEW reclaim.offer_funnel_daily AS
SELECT d.bundle_id,
       d.campaign_id,
       (d.triggered_at AT TIME ZONE 'UTC')::date                  AS day,
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
GROUP BY d.bundle_id, d.campaign_id, (d.triggered_at AT TIME ZONE 'UTC')::date;
COMMENT ON VIEW reclaim.offer_funnel_daily IS 'Per campaign and UTC day of the triggering notification: decisions and what became of their offers. Sum over days for a period.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.day IS 'UTC date of the triggering notification''s signedDate.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.decided IS 'Triggers (offered + held out + skipped).';
COMMENT ON COLUMN reclaim.offer_funnel_daily.held_out IS 'Eligible subscribers kept as the control group.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.skipped IS 'Triggers a rule turned down.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.offered IS 'Offers issued.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.delivered IS 'Offers fetched by the app at least once.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.shown IS 'Offers the app reported as shown.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.redeemed IS 'Offers Apple reported as redeemed.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.withdrawn IS 'Offers withdrawn.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.expired IS 'Offers that expired unredeemed.';

CREATE VIEW reclaim.offer_revenue_daily AS
SELECT r.bundle_id,
       coalesce(o.campaign_id, '(not issued by Reclaim)')         AS campaign_id,
       (r.redeemed_at AT TIME ZONE 'UTC')::date                   AS day,
       coalesce(r.currency, '')                                   AS currency,
       count(*)                                                   AS redemptions,
       coalesce(sum(r.price), 0)                                  AS revenue_milli
FROM reclaim.offer_redemptions r
LEFT JOIN reclaim.offers o ON o.id = r.offer_id
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.offer_revenue_daily IS 'Promotional-offer purchases per campaign, UTC day and currency, with what they paid. Purchases of offers Reclaim did not issue appear under ''(not issued by Reclaim)''.';
COMMENT ON COLUMN reclaim.offer_revenue_daily.bundle_id IS 'The app.';
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
       s.campaign_id,
       count(*) FILTER (WHERE s.outcome = 'offered')              AS treated,
       count(*) FILTER (WHERE s.outcome = 'held_out')             AS held_out,
       count(*) FILTER (WHERE s.outcome = 'offered' AND EXISTS (
           SELECT 1 FROM reclaim.offers o JOIN reclaim.campaign_decisions d2 ON d2.id = o.decision_id
           WHERE d2.campaign_id = s.campaign_id AND o.bundle_id = s.bundle_id AND o.environment = s.environment
             AND o.original_transaction_id = s.original_transaction_id AND o.state = 'redeemed')) AS treated_redeemed,
       count(*) FILTER (WHERE s.outcome = 'offered' AND sub.expires_at > s.triggered_at + interval '30 days') AS treated_retained_30d,
       count(*) FILTER (WHERE s.outcome = 'held_out' AND sub.expires_at > s.triggered_at + interval '30 days') AS held_out_retained_30d
FROM subjects s
LEFT JOIN reclaim.subscriptions sub
  ON sub.bundle_id = s.bundle_id AND sub.environment = s.environment AND sub.original_transaction_id = s.original_transaction_id
GROUP BY s.bundle_id, s.campaign_id;
COMMENT ON VIEW reclaim.campaign_lift IS 'Per campaign: subscribers treated (first decision offered) against held out (first decision held out), with redemptions and 30-day retention of each group. Retained: the subscription now runs until more than 30 days after the first trigger. Compare the rates, and mind the group sizes.';
COMMENT ON COLUMN reclaim.campaign_lift.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_lift.campaign_id IS 'The campaign.';
COMMENT ON COLUMN reclaim.campaign_lift.treated IS 'Subscribers whose first decision of this campaign offered.';
COMMENT ON COLUMN reclaim.campaign_lift.held_out IS 'Subscribers whose first decision of this campaign held them out.';
COMMENT ON COLUMN reclaim.campaign_lift.treated_redeemed IS 'Treated subscribers who redeemed an offer of this campaign.';
COMMENT ON COLUMN reclaim.campaign_lift.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_lift.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past their first trigger.';

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
WHERE notification_type = 'EXPIRED'
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reclaim.churn_reasons_daily IS 'Subscriptions that expired per UTC day and reason (the EXPIRED notification''s subtype, Apple''s expirationIntent in words).';
COMMENT ON COLUMN reclaim.churn_reasons_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.environment IS 'Sandbox or Production.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.day IS 'UTC date of the EXPIRED notification''s signedDate.';
COMMENT ON COLUMN reclaim.churn_reasons_daily.reason IS 'VOLUNTARY (cancelled), BILLING_RETRY (billing failed), PRICE_INCREASE (declined it), PRODUCT_NOT_FOR_SALE, or '''' (other).';
COMMENT ON COLUMN reclaim.churn_reasons_daily.expirations IS 'Expirations.';

CREATE VIEW reclaim.dead_jobs AS
SELECT id, kind, notification_uuid, attempts, last_error, updated_at AS died_at
FROM reclaim.jobs
WHERE state = 'dead';
COMMENT ON VIEW reclaim.dead_jobs IS 'Jobs that failed their maximum attempts, with their last error (requeue with `reclaim jobs dead --retry`).';
COMMENT ON COLUMN reclaim.dead_jobs.id IS 'Job id.';
COMMENT ON COLUMN reclaim.dead_jobs.kind IS 'What the job does.';
COMMENT ON COLUMN reclaim.dead_jobs.notification_uuid IS 'The notification it processes, if any.';
COMMENT ON COLUMN reclaim.dead_jobs.attempts IS 'Attempts made.';
COMMENT ON COLUMN reclaim.dead_jobs.last_error IS 'The error of the last attempt.';
COMMENT ON COLUMN reclaim.dead_jobs.died_at IS 'When it was declared dead.';

CREATE VIEW reclaim.notifications_daily AS
SELECT bundle_id, environment, (signed_date AT TIME ZONE 'UTC')::date AS day, notification_type, coalesce(subtype, '') AS subtype,
       count(*) AS notifications
FROM reclaim.notifications
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
