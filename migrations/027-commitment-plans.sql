-- Upgrade of schema version 26 to 27: each subscription's billing plan and 12-month commitment (App Store Server
-- API 1.21: billingPlanType, commitmentInfo), which campaigns read to tell a commitment's non-renewal from churn.
-- reclaim-additive: yes
-- (Additive: nullable columns; version 26's binaries name the subscription columns they write and read.)
--
-- reclaim-schema-version: 27

ALTER TABLE reclaim.subscriptions
    ADD COLUMN billing_plan_type text,
    ADD COLUMN billing_period_number smallint,
    ADD COLUMN total_billing_periods smallint,
    ADD COLUMN commitment_expires_at timestamptz,
    ADD COLUMN commitment_price bigint,
    ADD COLUMN commitment_auto_renew boolean;
COMMENT ON COLUMN reclaim.subscriptions.billing_plan_type IS 'billingPlanType of the newest transaction naming one, as Apple sends it: MONTHLY (monthly payments with a 12-month commitment) or BILLED_UPFRONT. NULL: unknown (no transaction named a plan).';
COMMENT ON COLUMN reclaim.subscriptions.billing_period_number IS 'commitmentInfo.billingPeriodNumber of the newest transaction: this period''s number within the commitment (3 of 12).';
COMMENT ON COLUMN reclaim.subscriptions.total_billing_periods IS 'commitmentInfo.totalBillingPeriods: the commitment''s periods (12).';
COMMENT ON COLUMN reclaim.subscriptions.commitment_expires_at IS 'commitmentInfo.commitmentExpiresDate: when the commitment ends.';
COMMENT ON COLUMN reclaim.subscriptions.commitment_price IS 'commitmentInfo.commitmentPrice, in milliunits of the currency.';
COMMENT ON COLUMN reclaim.subscriptions.commitment_auto_renew IS 'Renewal info''s commitmentInfo.commitmentAutoRenewStatus = 1: the commitment renews at its end (auto_renew describes the next monthly payment only). NULL: no commitment known.';
