/// `schema.sql` and the upgrade scripts of `migrations/`, compiled into the binary so that `reclaim migrate` needs no
/// file at run time (the container image ships the binary alone).
///
/// The files are the only copies: `Schema/schema.sql` and `Schema/migrations` are symbolic links to the top-level
/// file and folder, which SwiftPM follows, and Package.swift embeds them with `.embedInCode`: each file becomes a
/// byte array of `PackageResources` named after it (`002-notifications-lz4.sql` is `_02_notifications_lz4_sql`).
/// SwiftPM lists no folder, so ``upgrades`` names each script; a test holds it to what `migrations/` holds.
public enum SchemaSQL {
    /// `schema.sql`: the whole schema at its current version, applied to an empty database.
    public static let text = String(decoding: PackageResources.schema_sql, as: UTF8.self)

    /// `migrations/NNN-name.sql` by NNN: the script that takes a database from version NNN-1 to NNN.
    public static let upgrades: [Int: String] = [
        2: PackageResources._02_notifications_lz4_sql,
        3: PackageResources._03_campaigns_offers_sql,
        4: PackageResources._04_api_key_names_sql,
        5: PackageResources._05_dashboard_views_sql,
        6: PackageResources._06_console_keys_sql,
        7: PackageResources._07_recovery_sql,
        8: PackageResources._08_backfill_source_sql,
        9: PackageResources._09_input_hardening_sql,
        10: PackageResources._10_job_claimed_at_sql,
        11: PackageResources._11_environment_in_business_views_sql,
        12: PackageResources._12_grant_message_identifier_sql,
        13: PackageResources._13_campaign_experiments_sql,
        14: PackageResources._14_outbound_sql,
        15: PackageResources._15_set_based_offer_webhooks_sql,
        16: PackageResources._16_purchase_outcome_events_sql,
        17: PackageResources._17_cancel_sheet_and_discounts_sql,
        18: PackageResources._18_cancel_sheet_first_decisions_sql,
        19: PackageResources._19_apple_api_pace_sql,
        20: PackageResources._20_refund_requests_sql,
        21: PackageResources._21_refund_answers_apart_sql,
        22: PackageResources._22_decisions_by_source_sql,
        23: PackageResources._23_cancel_sheet_replays_sql,
        24: PackageResources._24_messaging_uploads_sql,
        25: PackageResources._25_subscriber_erasure_sql,
        26: PackageResources._26_rescinded_consents_sql,
        27: PackageResources._27_commitment_plans_sql,
        28: PackageResources._28_plans_in_reports_sql,
        29: PackageResources._29_one_record_per_request_sql,
        30: PackageResources._30_forward_forgotten_sql,
        31: PackageResources._31_offer_codes_sql,
        32: PackageResources._32_renewal_extensions_sql,
        33: PackageResources._33_mass_extensions_and_account_tokens_sql,
        34: PackageResources._34_backfill_answers_sql,
        35: PackageResources._35_roles_and_audit_sql,
        36: PackageResources._36_app_stops_sql,
        37: PackageResources._37_cancel_flow_sql,
    ].mapValues { String(decoding: $0, as: UTF8.self) }
}
