-- Upgrade of schema version 10 to 11: every business view carries the environment, so that Sandbox (TestFlight
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- and sandbox testers, never charged) is no longer counted with Production in funnels, revenue and lift.
-- Dashboards, /console and docs/dashboards.md filter on environment = 'Production' by default.
--
-- reclaim-schema-version: 11

DROP VIEW reclaim.campaign_funnel;
DROP VIEW reclaim.offer_funnel_daily;
DROP VIEW reclaim.offer_revenue_daily;
DROP VIEW reclaim.campaign_lift;

CREATE VIEW reclaim.campaign_funnel AS
SELECT d.bundle_id,
       d.environment,
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
GROUP BY d.bundle_id, d.environment, d.campaign_id;
COMMENT ON VIEW reclaim.campaign_funnel IS 'Per campaign and environment, all time: decisions and what became of their offers. Grants are not decisions and do not appear here. Filter on environment = ''Production'' for business numbers: Sandbox is TestFlight and testers.';
COMMENT ON COLUMN reclaim.campaign_funnel.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.campaign_funnel.environment IS 'Production or Sandbox (TestFlight and sandbox testers; not revenue).';
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

CREATE VIEW reclaim.offer_funnel_daily AS
SELECT d.bundle_id,
       d.environment,
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
GROUP BY d.bundle_id, d.environment, d.campaign_id, (d.triggered_at AT TIME ZONE 'UTC')::date;
COMMENT ON VIEW reclaim.offer_funnel_daily IS 'Per campaign, environment and UTC day of the triggering notification: decisions and what became of their offers. Sum over days for a period; filter on environment = ''Production'' for business numbers.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.offer_funnel_daily.environment IS 'Production or Sandbox (TestFlight and sandbox testers; not revenue).';
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
       count(*) FILTER (WHERE s.outcome = 'offered' AND EXISTS (
           SELECT 1 FROM reclaim.offers o JOIN reclaim.campaign_decisions d2 ON d2.id = o.decision_id
           WHERE d2.campaign_id = s.campaign_id AND o.bundle_id = s.bundle_id AND o.environment = s.environment
             AND o.original_transaction_id = s.original_transaction_id AND o.state = 'redeemed')) AS treated_redeemed,
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
COMMENT ON COLUMN reclaim.campaign_lift.treated_redeemed IS 'Treated subscribers who redeemed an offer of this campaign.';
COMMENT ON COLUMN reclaim.campaign_lift.treated_retained_30d IS 'Treated subscribers whose subscription runs more than 30 days past their first trigger.';
COMMENT ON COLUMN reclaim.campaign_lift.held_out_retained_30d IS 'Held-out subscribers whose subscription runs more than 30 days past their first trigger.';

