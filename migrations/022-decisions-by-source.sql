-- Upgrade of schema version 21 to 22: campaign decisions counted by source (live or backfill), for importing an
-- existing base safely.
-- reclaim-additive: yes
-- (Additive: a new view; version 21's binaries do not read it.)
--
-- reclaim-schema-version: 22

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
