-- Upgrade of schema version 15 to 16: the app reports two more outcomes of a purchase with an offer, each as its own
-- event: purchase_pending (StoreKit's .pending: Ask to Buy, or a purchase awaiting approval; it was reported as
-- dismissed) and purchase_failed, with the error StoreKit threw (an offer identifier App Store Connect does not know, a
-- signature it refused), so that a configuration mistake shows on the server instead of only on a device.
-- reclaim-additive: yes
-- (Additive: the event check only widens and the new column is nullable; version 15's binaries write the three events
-- they know, with no error, as before.)
--
-- reclaim-schema-version: 16

ALTER TABLE reclaim.offer_events DROP CONSTRAINT offer_events_event_check;
ALTER TABLE reclaim.offer_events ADD CONSTRAINT offer_events_event_check
    CHECK (event IN ('shown', 'dismissed', 'purchase_started', 'purchase_pending', 'purchase_failed'));
ALTER TABLE reclaim.offer_events ADD COLUMN purchase_error text;
ALTER TABLE reclaim.offer_events ADD CONSTRAINT offer_events_purchase_error_check
    CHECK (purchase_error IS NULL OR (event = 'purchase_failed' AND char_length(purchase_error) BETWEEN 1 AND 256));
COMMENT ON COLUMN reclaim.offer_events.event IS 'shown, dismissed, purchase_started, purchase_pending (Ask to Buy: awaiting approval) or purchase_failed.';
COMMENT ON COLUMN reclaim.offer_events.purchase_error IS 'purchase_failed only: the error StoreKit threw, as the app described it (at most 256 characters); NULL when the app sent none.';
