import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Issue 65: monthly payments with a 12-month commitment. Apple, "Managing the life cycle of monthly subscriptions with
/// a 12-month commitment": a customer who cancels mid-commitment is "canceling the renewal of the commitment, not the
/// remaining payments … Billing continues through all remaining periods"; the server gets DID_CHANGE_RENEWAL_STATUS with
/// an AUTO_RENEW_DISABLED subtype while the renewal info's own auto-renew stays on, and "If the billing plan type is
/// MONTHLY, read commitmentAutoRenewStatus to confirm the commitment doesn't renew."
@Suite("Commitment plans: a cancellation mid-commitment is decided commitmentLead before the end, not as churn", .poolWatchdog)
struct CommitmentPlanTests {
    let logger = TestPostgres.logger
    static let monthly = "ca.geniusparentingai.basic.monthly"

    /// A retention campaign for MONTHLY plans only, above the corpus setup's retention campaign (no plan condition).
    static let monthlyCampaign = """
          - id: retain-monthly
            app: GeniusParentingAI
            trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
            offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: RETAIN-MONTHLY}
            conditions: {billingPlans: [MONTHLY]}
            deliverableFor: 30d
            cooldown: 0s
            priority: 20
        """

    /// DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED with Apple's field names (those of Apple's Python models): a
    /// monthly period running, and for a commitment, `billingPlanType` MONTHLY, the transaction's `commitmentInfo`
    /// and the renewal info's, whose `commitmentAutoRenewStatus` is `commitmentRenews`; `autoRenewStatus` stays 1.
    static func cancellation(
        _ notifications: TestNotifications,
        ca: TestCertificateAuthority,
        otid: String,
        commitment: (period: Int, endsIn: TimeInterval)?,
        commitmentRenews: Int = 0,
        subtype: String = "AUTO_RENEW_DISABLED",
        signedDate: Date
    ) throws -> Data {
        let millis = { (date: Date) in Int64(date.timeIntervalSince1970 * 1000) }
        var transaction: [String: Any] = [
            "productId": monthly, "expiresDate": millis(Date().addingTimeInterval(20 * 86_400)),
            "originalPurchaseDate": millis(Date().addingTimeInterval(-70 * 86_400)),
        ]
        var renewal: [String: Any] = [
            "originalTransactionId": otid, "productId": monthly, "autoRenewProductId": monthly, "autoRenewStatus": 1,
            "environment": "Sandbox", "signedDate": millis(signedDate),
        ]
        if let commitment {
            transaction["billingPlanType"] = "MONTHLY"
            transaction["commitmentInfo"] = [
                "billingPeriodNumber": commitment.period, "totalBillingPeriods": 12,
                "commitmentExpiresDate": millis(Date().addingTimeInterval(commitment.endsIn)), "commitmentPrice": 131_880,
            ]
            renewal["renewalBillingPlanType"] = "MONTHLY"
            renewal["commitmentInfo"] = ["commitmentAutoRenewStatus": commitmentRenews, "commitmentAutoRenewProductId": monthly]
        } else {
            renewal["autoRenewStatus"] = 0
        }
        return try notifications.body(
            type: "DID_CHANGE_RENEWAL_STATUS",
            subtype: subtype,
            originalTransactionId: otid,
            appAccountToken: UUID(),
            signedDate: signedDate,
            transactionFields: transaction,
            dataFields: ["signedRenewalInfo": try ca.sign(json: renewal)]
        )
    }

    @Test(
        "no commitment: offered at once (not by the MONTHLY campaign); month 3 of 12: nothing now, decided 14 days before the end; ending in 10 days: offered at once by the MONTHLY campaign; a commitment renewing again is skipped when its fire comes"
    )
    func lifeCycle() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.monthlyCampaign)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let now = Date()
        let later = now.addingTimeInterval(86_400)
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            func offers(_ otid: String) async throws -> [String] {
                var found: [String] = []
                let rows = try await client.query(
                    "SELECT offer_identifier FROM reclaim.offers WHERE original_transaction_id = \(otid) ORDER BY created_at",
                    logger: logger
                )
                for try await row in rows.decode(String.self) { found.append(row) }
                return found
            }
            func outcomes(_ otid: String) async throws -> [String] {
                var found: [String] = []
                let rows = try await client.query(
                    "SELECT campaign_id || ': ' || outcome || ': ' || reason FROM reclaim.campaign_decisions WHERE original_transaction_id = \(otid) ORDER BY decided_at, campaign_id",
                    logger: logger
                )
                for try await row in rows.decode(String.self) { found.append(row) }
                return found
            }

            try await processNotifications(
                [
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000880001", commitment: nil, signedDate: now),
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000880003", commitment: (3, 270 * 86_400), signedDate: now),
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000880010", commitment: (12, 10 * 86_400), signedDate: now),
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000880004", commitment: (4, 240 * 86_400), signedDate: now),
                ],
                client: client,
                dependencies: dependencies,
                notWaitingForJobsDueAfter: later
            )
            #expect(try await offers("3000000000880001") == ["RETAIN50"], "no commitment: churn, offered now")
            #expect(
                try await outcomes("3000000000880001").contains { $0.hasPrefix("retain-monthly: skipped: condition not met: billing plan unknown") }
            )
            #expect(try await offers("3000000000880003").isEmpty, "month 3 of 12: the customer pays 9 more months")
            #expect(try await outcomes("3000000000880003").isEmpty, "nothing decided now")
            #expect(try await offers("3000000000880010") == ["RETAIN-MONTHLY"], "the commitment ends within the lead: decided now")
            // The deferred ones: one fire per campaign, 14 days before the commitment's end.
            let due = try await firstInt(
                client,
                """
                SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'campaign-fire' AND payload->>'originalTransactionId' = '3000000000880003'
                  AND abs(extract(epoch FROM run_at - (now() + interval '256 days'))) < 600
                """
            )
            #expect(due == 2)

            // Subscriber 4 turns the commitment's renewal back on before its fire comes.
            try await processNotifications(
                [
                    try Self.cancellation(
                        notifications,
                        ca: ca,
                        otid: "3000000000880004",
                        commitment: (4, 240 * 86_400),
                        commitmentRenews: 1,
                        subtype: "AUTO_RENEW_ENABLED",
                        signedDate: now.addingTimeInterval(60)
                    )
                ],
                client: client,
                dependencies: dependencies,
                notWaitingForJobsDueAfter: later
            )
            // The fires come (as the lead before the end is reached): re-checked then.
            try await client.query("UPDATE reclaim.jobs SET run_at = now() WHERE kind = 'campaign-fire'", logger: logger)
            try await processNotifications([], client: client, dependencies: dependencies, notWaitingForJobsDueAfter: later)
            let atLead = try await outcomes("3000000000880003")
            #expect(try await offers("3000000000880003").last == "RETAIN-MONTHLY", "decided at the lead: the MONTHLY campaign offers; \(atLead)")
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.offers WHERE original_transaction_id = '3000000000880003' AND state = 'ready' AND offer_identifier = 'RETAIN-MONTHLY'"
                ) == 1
            )
            #expect(try await offers("3000000000880004").isEmpty)
            let renewed = try await outcomes("3000000000880004")
            #expect(!renewed.isEmpty && renewed.allSatisfy { $0.contains("skipped: commitment renews") }, "\(renewed)")
            // Apple's fields read back into the state.
            #expect(
                try await firstInt(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.subscriptions WHERE original_transaction_id = '3000000000880003'
                      AND billing_plan_type = 'MONTHLY' AND billing_period_number = 3 AND total_billing_periods = 12
                      AND commitment_price = 131880 AND commitment_auto_renew = false AND commitment_expires_at > now() + interval '269 days'
                    """
                ) == 1
            )
        }
    }

    @Test("campaigns check refuses a billing plan Apple does not have, and a commitmentLead beyond a year")
    func configuration() throws {
        func problems(_ extra: String) -> String {
            do {
                _ = try CampaignTestSetup(settings: extra)
                return ""
            } catch { return "\(error)" }
        }
        #expect(
            problems(Self.monthlyCampaign.replacingOccurrences(of: "[MONTHLY]", with: "[WEEKLY]")).contains(
                "WEEKLY is not one of Apple's billing plans"
            )
        )
        #expect(problems(Self.monthlyCampaign + "\n    commitmentLead: 400d").contains("commitmentLead"))
        #expect(problems(Self.monthlyCampaign).isEmpty)
    }
}
