-- Upgrade of schema version 13 to 14: campaign variants (an experiment's arms). Every decision that offered, and
-- its offer, records the variant; events and redemptions reach it through their offer.
--
-- reclaim-schema-version: 14

ALTER TABLE reclaim.campaign_decisions ADD COLUMN variant_id text;
ALTER TABLE reclaim.offers ADD COLUMN variant_id text;
COMMENT ON COLUMN reclaim.campaign_decisions.variant_id IS 'For offered: the campaign variant whose offer was issued (an experiment''s arm); NULL for a campaign without variants, and for held out and skipped.';
COMMENT ON COLUMN reclaim.offers.variant_id IS 'The campaign variant it offers; NULL for a campaign without variants, and for grants.';
