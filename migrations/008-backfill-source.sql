-- Upgrade of schema version 7 to 8: notifications.source, so that reclaim backfill --evaluate can store the
-- reclaim-additive: no
-- (Whether a binary of the previous version serves the upgraded database; not judged for the steps before 1.0.0,
-- whose binaries demanded their own version exactly. docs/operations.md, "Upgrades".)
-- notification a subscription's status implies (campaign decisions refer to a notification), and the views
-- of Apple's notifications leave those rows out.
--
-- reclaim-schema-version: 8

ALTER TABLE reclaim.notifications
    ADD COLUMN source text NOT NULL DEFAULT 'apple' CHECK (source IN ('apple', 'backfill'));
COMMENT ON COLUMN reclaim.notifications.source IS 'apple: a notification Apple sent (or its history returned). backfill: the state reclaim backfill --evaluate read from Get All Subscription Statuses, stored as the notification it implies (e.g. EXPIRED/VOLUNTARY) so campaign decisions can refer to it; signed_payload then holds the signed transaction info. Dashboards of Apple''s notifications filter on source = ''apple''.';

CREATE OR REPLACE VIEW reclaim.churn_reasons_daily AS
SELECT bundle_id, environment, (signed_date AT TIME ZONE 'UTC')::date AS day, coalesce(subtype, '') AS reason, count(*) AS expirations
FROM reclaim.notifications
WHERE notification_type = 'EXPIRED' AND source = 'apple'
GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW reclaim.notifications_daily AS
SELECT bundle_id, environment, (signed_date AT TIME ZONE 'UTC')::date AS day, notification_type, coalesce(subtype, '') AS subtype,
       count(*) AS notifications
FROM reclaim.notifications
WHERE source = 'apple'
GROUP BY 1, 2, 3, 4, 5;
