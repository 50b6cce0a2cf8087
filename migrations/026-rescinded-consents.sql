-- Upgrade of schema version 25 to 26: the app account of each subscription (appTransactionId) and parents'
-- withdrawals of consent (RESCIND_CONSENT), so that the subscriptions of such an account get no campaign again.
-- reclaim-additive: yes
-- (Additive: two nullable columns, an index and a table; version 25's binaries name the subscription columns they
-- write and read, so they neither see nor clear the new ones.)
--
-- reclaim-schema-version: 26

ALTER TABLE reclaim.subscriptions ADD COLUMN app_transaction_id text, ADD COLUMN consent_rescinded_at timestamptz;
COMMENT ON COLUMN reclaim.subscriptions.app_transaction_id IS 'appTransactionId of the newest transaction or renewal info carrying it: the app account (one per Apple Account and family member), how a RESCIND_CONSENT finds its subscriptions.';
COMMENT ON COLUMN reclaim.subscriptions.consent_rescinded_at IS 'When a parent or guardian withdrew consent for the app (RESCIND_CONSENT, its signedDate): no campaign, grant or cancel-sheet answer reaches the subscriber from then on. NULL: not withdrawn.';
CREATE INDEX subscriptions_app_transaction_idx ON reclaim.subscriptions (bundle_id, environment, app_transaction_id) WHERE app_transaction_id IS NOT NULL;

CREATE TABLE reclaim.rescinded_consents (
    bundle_id          text        NOT NULL,
    environment        text        NOT NULL,
    app_transaction_id text        NOT NULL,
    rescinded_at       timestamptz NOT NULL,
    notification_uuid  uuid        NOT NULL,
    PRIMARY KEY (bundle_id, environment, app_transaction_id)
);
COMMENT ON TABLE reclaim.rescinded_consents IS 'App accounts whose parent or guardian withdrew consent for the app (RESCIND_CONSENT: "the parent or guardian has withdrawn consent for a child''s app usage"): their subscriptions, present and future, get no campaign, grant or cancel-sheet answer (reclaim.subscriptions.consent_rescinded_at).';
COMMENT ON COLUMN reclaim.rescinded_consents.bundle_id IS 'The app.';
COMMENT ON COLUMN reclaim.rescinded_consents.environment IS 'Production or Sandbox.';
COMMENT ON COLUMN reclaim.rescinded_consents.app_transaction_id IS 'The app account: appTransactionId of the notification''s signed app transaction.';
COMMENT ON COLUMN reclaim.rescinded_consents.rescinded_at IS 'The notification''s signedDate (the first one, when Apple sends more).';
COMMENT ON COLUMN reclaim.rescinded_consents.notification_uuid IS 'The RESCIND_CONSENT notification.';
