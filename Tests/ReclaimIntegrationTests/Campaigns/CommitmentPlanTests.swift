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
        upfront: Bool = false,
        signedDate: Date
    ) throws -> Data {
        let (transaction, renewal) = fields(
            otid: otid,
            commitment: commitment,
            commitmentRenews: commitmentRenews,
            upfront: upfront,
            signedDate: signedDate
        )
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

    /// The signed transaction's and renewal info's fields of ``cancellation(_:ca:otid:commitment:commitmentRenews:subtype:upfront:signedDate:)``
    /// (`upfront`: a plan billed up front, named as such).
    static func fields(
        otid: String,
        commitment: (period: Int, endsIn: TimeInterval)?,
        commitmentRenews: Int = 0,
        upfront: Bool = false,
        signedDate: Date
    ) -> (transaction: [String: Any], renewal: [String: Any]) {
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
        if upfront {
            transaction["billingPlanType"] = "BILLED_UPFRONT"
            renewal["renewalBillingPlanType"] = "BILLED_UPFRONT"
        }
        return (transaction, renewal)
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
            // The reports split by the plan as it was when decided.
            var funnel: [String] = []
            for try await (campaign, plan, offered) in try await client.query(
                "SELECT campaign_id, billing_plan_type, offered::int FROM reclaim.campaign_funnel_by_plan ORDER BY 1, 2",
                logger: logger
            ).decode((String, String, Int).self) {
                funnel.append("\(campaign) \(plan) \(offered)")
            }
            #expect(funnel.contains("retain-monthly MONTHLY 2"), "\(funnel)")
            #expect(funnel.contains("retain-monthly unknown 0"), "\(funnel)")
            #expect(funnel.contains("retain-auto-renew-off unknown 1"), "\(funnel)")
            let lift = try await firstInt(
                client,
                "SELECT sum(treated)::int FROM reclaim.campaign_lift_by_plan WHERE campaign_id = 'retain-monthly' AND billing_plan_type = 'MONTHLY'"
            )
            #expect(lift == 2)
        }
    }

    /// One campaign for both plans: `offer.offerIdentifiers` gives each plan its offer; `offerIdentifier` beside it
    /// serves a subscription whose plan is unknown.
    static let bothPlansCampaign = """
          - id: retain-both
            app: GeniusParentingAI
            trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
            offer:
              productId: ca.geniusparentingai.basic.monthly
              offerIdentifiers: {MONTHLY: RETAIN-M, BILLED_UPFRONT: RETAIN-U}
            deliverableFor: 30d
            cooldown: 0s
            priority: 30
        """

    @Test(
        "one campaign, an offer per plan: billed up front gets its offer, MONTHLY ending in 10 days its own, an unknown plan none (a lower campaign takes it)"
    )
    func offerPerPlan() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.bothPlansCampaign)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let now = Date()
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            try await processNotifications(
                [
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000890001", commitment: nil, upfront: true, signedDate: now),
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000890010", commitment: (12, 10 * 86_400), signedDate: now),
                    try Self.cancellation(notifications, ca: ca, otid: "3000000000890002", commitment: nil, signedDate: now),
                ],
                client: client,
                dependencies: dependencies,
                notWaitingForJobsDueAfter: now.addingTimeInterval(86_400)
            )
            var offers: [String] = []
            for try await (otid, offer, plan) in try await client.query(
                """
                SELECT o.original_transaction_id, o.offer_identifier, coalesce(d.billing_plan_type, 'unknown')
                FROM reclaim.offers o JOIN reclaim.campaign_decisions d ON d.id = o.decision_id ORDER BY 1
                """,
                logger: logger
            ).decode((String, String, String).self) {
                offers.append("\(otid) \(offer) \(plan)")
            }
            #expect(
                offers == [
                    "3000000000890001 RETAIN-U BILLED_UPFRONT", "3000000000890002 RETAIN50 unknown", "3000000000890010 RETAIN-M MONTHLY",
                ]
            )
            let skipped = try await firstInt(
                client,
                """
                SELECT count(*)::int FROM reclaim.campaign_decisions WHERE original_transaction_id = '3000000000890002'
                  AND campaign_id = 'retain-both' AND outcome = 'skipped' AND reason LIKE 'no offer for billing plan unknown%'
                """
            )
            #expect(skipped == 1)
            // The subscriber's story tells the plan of the subscription and of each decision.
            let story = try await SubscriberTasks.show(.init(.originalTransactionId("3000000000890010")), json: false, url: url, logger: logger)
            #expect(story.contains("plan MONTHLY (period 12 of 12)"), "\(story)")
            #expect(
                story.contains(
                    "retain-both: offered (eligible: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED and every condition met), plan MONTHLY"
                ),
                "\(story)"
            )
        }
    }

    @Test("a billingPlanType, offerType and notification type Reclaim does not know are stored, processed and counted, never refused")
    func unknownValues() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.monthlyCampaign)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let now = Date()
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            let millis = Int64(now.timeIntervalSince1970 * 1000)
            let fields: [String: Any] = [
                "productId": Self.monthly, "billingPlanType": "QUARTERLY", "offerType": 9, "offerIdentifier": "FUTURE",
                "expiresDate": millis + 86_400_000, "purchaseDate": millis,
            ]
            try await processNotifications(
                [
                    try notifications.body(
                        type: "SUBSCRIPTION_FUTURE_EVENT",
                        subtype: "SOMETHING_NEW",
                        originalTransactionId: "3000000000899999",
                        signedDate: now,
                        transactionFields: fields
                    ),
                    try notifications.body(
                        type: "DID_RENEW",
                        subtype: nil,
                        originalTransactionId: "3000000000899998",
                        signedDate: now,
                        transactionFields: fields
                    ),
                ],
                client: client,
                dependencies: dependencies
            )
            #expect(
                try await firstInt(
                    client,
                    """
                    SELECT sum(notifications)::int FROM reclaim.notifications_daily
                    WHERE (notification_type = 'SUBSCRIPTION_FUTURE_EVENT' AND subtype = 'SOMETHING_NEW') OR notification_type = 'DID_RENEW'
                    """
                ) == 2
            )
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.jobs WHERE state <> 'completed'") == 0)
            #expect(
                try await firstInt(
                    client,
                    "SELECT count(*)::int FROM reclaim.subscriptions WHERE original_transaction_id = '3000000000899998' AND billing_plan_type = 'QUARTERLY'"
                ) == 1,
                "kept as Apple sent it"
            )
            #expect(
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.offer_redemptions WHERE offer_type = 9") == 1,
                "an offer type Apple adds later is a redemption like any"
            )
        }
    }

    @Test("the fields the tests post are Apple's: app-store-server-library's models read them back, enums and commitment objects included")
    func applesModelsReadThem() async throws {
        let now = Date()
        let (transaction, renewal) = Self.fields(otid: "3000000000880003", commitment: (3, 270 * 86_400), signedDate: now)
        let (upfront, upfrontRenewal) = Self.fields(otid: "3000000000880001", commitment: nil, upfront: true, signedDate: now)
        let script = #"""
            import json, sys
            from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
            from appstoreserverlibrary.models.JWSRenewalInfoDecodedPayload import JWSRenewalInfoDecodedPayload
            from appstoreserverlibrary.models.BillingPlanType import BillingPlanType
            from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
            bodies = json.load(sys.stdin)
            t = _get_cattrs_converter(JWSTransactionDecodedPayload).structure(bodies["transaction"], JWSTransactionDecodedPayload)
            r = _get_cattrs_converter(JWSRenewalInfoDecodedPayload).structure(bodies["renewal"], JWSRenewalInfoDecodedPayload)
            assert t.billingPlanType == BillingPlanType.MONTHLY, t
            assert t.commitmentInfo.billingPeriodNumber == 3 and t.commitmentInfo.totalBillingPeriods == 12, t.commitmentInfo
            assert t.commitmentInfo.commitmentPrice == 131880 and t.commitmentInfo.commitmentExpiresDate > 0, t.commitmentInfo
            assert r.renewalBillingPlanType == BillingPlanType.MONTHLY, r
            assert r.commitmentInfo.commitmentAutoRenewStatus == 0 and r.autoRenewStatus == 1, r
            u = _get_cattrs_converter(JWSTransactionDecodedPayload).structure(bodies["upfront"], JWSTransactionDecodedPayload)
            ur = _get_cattrs_converter(JWSRenewalInfoDecodedPayload).structure(bodies["upfrontRenewal"], JWSRenewalInfoDecodedPayload)
            assert u.billingPlanType == BillingPlanType.BILLED_UPFRONT and u.commitmentInfo is None, u
            assert ur.renewalBillingPlanType == BillingPlanType.BILLED_UPFRONT, ur
            for name, model in [("transaction", JWSTransactionDecodedPayload), ("renewal", JWSRenewalInfoDecodedPayload)]:
                back = _get_cattrs_converter(model).unstructure(_get_cattrs_converter(model).structure(bodies[name], model))
                assert back == bodies[name], (back, bodies[name])
            print("checked")
            """#
        let input = try JSONSerialization.data(withJSONObject: [
            "transaction": transaction, "renewal": renewal, "upfront": upfront, "upfrontRenewal": upfrontRenewal,
        ])
        let run = try await Subprocess.run("/usr/bin/env", ["python3", "-c", script], input: input)
        #expect(run.status == 0 && run.output.hasPrefix("checked"), "\(run.output)\(run.errors)")
    }

    /// One commitment subscriber's whole life, as Apple's "Managing the life cycle of monthly subscriptions with a
    /// 12-month commitment" tells it, with 30-day periods: bought 340 days ago (the commitment ends in 20 days),
    /// renewed monthly, cancelled in month 2 ("canceling the renewal of the commitment, not the remaining payments"),
    /// a payment failing in month 5 and recovered ("Billing Grace Period doesn't apply": billing retry), the 12th and
    /// final period, then EXPIRED.
    @Test(
        "a commitment's whole life through Apple's events: nothing offered for 11 months of payments, the MONTHLY campaign 14 days before the end, win-back after it"
    )
    func wholeLifeCycle() async throws {
        // Apple's chain is checked at each notification's signedDate: a leaf valid through the whole year.
        let ca = try TestCertificateAuthority(leafValidity: Date().addingTimeInterval(-400 * 86_400)...Date().addingTimeInterval(400 * 86_400))
        let setup = try CampaignTestSetup(ca: ca, settings: Self.monthlyCampaign)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let otid = "3000000000870001"
        let now = Date()
        let start = now.addingTimeInterval(-340 * 86_400)
        let end = start.addingTimeInterval(360 * 86_400)
        let millis = { @Sendable (date: Date) in Int64(date.timeIntervalSince1970 * 1000) }
        /// A notification signed `at`, its transaction the payment of `period` (30 days each) and its renewal info's
        /// commitment renewing or not.
        @Sendable func event(
            _ type: String,
            _ subtype: String?,
            period: Int,
            at: Date,
            commitmentRenews: Int,
            status: Int = 1,
            billingRetry: Bool = false,
            endedAt: Date? = nil
        ) throws -> Data {
            let purchased = start.addingTimeInterval(Double(period - 1) * 30 * 86_400)
            // `endedAt`: the commitment's last period ended then (the test cannot sign in the future).
            let expires = endedAt ?? purchased.addingTimeInterval(30 * 86_400)
            let transaction: [String: Any] = [
                "productId": Self.monthly, "transactionId": "\(otid)\(period)", "purchaseDate": millis(purchased),
                "expiresDate": millis(expires), "originalPurchaseDate": millis(start),
                "billingPlanType": "MONTHLY",
                "commitmentInfo": [
                    "billingPeriodNumber": period, "totalBillingPeriods": 12, "commitmentExpiresDate": millis(endedAt ?? end),
                    "commitmentPrice": 131_880,
                ],
            ]
            let renewal: [String: Any] = [
                "originalTransactionId": otid, "productId": Self.monthly, "autoRenewProductId": Self.monthly,
                "autoRenewStatus": period == 12 && commitmentRenews == 0 ? 0 : 1, "environment": "Sandbox", "signedDate": millis(at),
                "renewalBillingPlanType": "MONTHLY", "isInBillingRetryPeriod": billingRetry,
                "commitmentInfo": ["commitmentAutoRenewStatus": commitmentRenews, "commitmentAutoRenewProductId": Self.monthly],
            ]
            return try notifications.body(
                type: type,
                subtype: subtype,
                originalTransactionId: otid,
                appAccountToken: UUID(uuidString: "00000000-0000-0000-0000-000000000870"),
                signedDate: at,
                transactionFields: transaction,
                dataFields: ["signedRenewalInfo": try ca.sign(json: renewal)],
                status: status
            )
        }
        @Sendable func day(_ n: Double) -> Date { start.addingTimeInterval(n * 86_400) }
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            func offers() async throws -> [String] {
                var found: [String] = []
                for try await (offer, state) in try await client.query(
                    "SELECT offer_identifier, state FROM reclaim.offers WHERE original_transaction_id = \(otid) ORDER BY created_at",
                    logger: logger
                ).decode((String, String).self) {
                    found.append("\(offer) \(state)")
                }
                return found
            }
            let later = now.addingTimeInterval(3_600)
            var months = [
                try event("SUBSCRIBED", "INITIAL_BUY", period: 1, at: day(0), commitmentRenews: 1),
                try event("DID_RENEW", nil, period: 2, at: day(30), commitmentRenews: 1),
                // Month 2: the customer cancels. Apple keeps autoRenewStatus 1 (the payments go on) and says the
                // commitment will not renew.
                try event("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", period: 2, at: day(40), commitmentRenews: 0),
                try event("DID_RENEW", nil, period: 3, at: day(60), commitmentRenews: 0),
                try event("DID_RENEW", nil, period: 4, at: day(90), commitmentRenews: 0),
                // Month 5's payment fails: billing retry, no grace period; recovered five days later.
                try event("DID_FAIL_TO_RENEW", nil, period: 4, at: day(120), commitmentRenews: 0, status: 3, billingRetry: true),
                try event("DID_RENEW", "BILLING_RECOVERY", period: 5, at: day(125), commitmentRenews: 0),
            ]
            for period in 6...12 { months.append(try event("DID_RENEW", nil, period: period, at: day(Double(period - 1) * 30), commitmentRenews: 0)) }
            try await processNotifications(months, client: client, dependencies: dependencies, notWaitingForJobsDueAfter: later)
            #expect(try await offers().isEmpty, "eleven months of payments left when the customer cancelled: no retention offer")
            #expect(
                try await firstInt(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.subscriptions WHERE original_transaction_id = '\(otid)' AND status = 'active'
                      AND billing_plan_type = 'MONTHLY' AND billing_period_number = 12 AND commitment_auto_renew = false
                    """
                ) == 1
            )
            // Both retention campaigns wait for 14 days before the end (now + 6 days).
            #expect(
                try await firstInt(
                    client,
                    """
                    SELECT count(*)::int FROM reclaim.jobs WHERE kind = 'campaign-fire' AND state <> 'completed'
                      AND abs(extract(epoch FROM run_at - (now() + interval '6 days'))) < 600
                    """
                ) == 2
            )
            #expect(try await firstInt(client, "SELECT count(*)::int FROM reclaim.campaign_decisions") == 0)

            // The fires come: the MONTHLY campaign (priority 20) offers, the other stands behind its live offer.
            try await client.query("UPDATE reclaim.jobs SET run_at = now() WHERE kind = 'campaign-fire'", logger: logger)
            try await processNotifications([], client: client, dependencies: dependencies, notWaitingForJobsDueAfter: later)
            #expect(try await offers() == ["RETAIN-MONTHLY ready"])

            // The offer lapses unredeemed, the commitment ends: EXPIRED/VOLUNTARY, and win-back works as for any lapse.
            try await client.query(
                "UPDATE reclaim.offers SET state = 'expired', ended_at = now(), end_reason = 'deliverable_until passed' WHERE original_transaction_id = \(otid)",
                logger: logger
            )
            try await processNotifications(
                [try event("EXPIRED", "VOLUNTARY", period: 12, at: now, commitmentRenews: 0, status: 2, endedAt: now.addingTimeInterval(-1))],
                client: client,
                dependencies: dependencies,
                notWaitingForJobsDueAfter: later
            )
            var decided: [String] = []
            for try await line in try await client.query(
                "SELECT campaign_id || ': ' || outcome || ': ' || reason FROM reclaim.campaign_decisions ORDER BY decided_at",
                logger: logger
            ).decode(String.self) {
                decided.append(line)
            }
            #expect(try await offers() == ["RETAIN-MONTHLY expired", "WINBACK30 ready"], "\(decided)")
        }
    }

    /// Issue 71: Apple, "Managing the life cycle of monthly subscriptions with a 12-month commitment": "If the refund
    /// applies to a prior billing period, the system revokes the transaction for that specific period, but the
    /// commitment continues unaffected"; "If the refund applies to the current billing period, the commitment ends
    /// immediately."
    @Test("a REFUND of month 2 in month 5 leaves the commitment as it was; a REFUND of month 5 ends it")
    func refundsOfAPastAndTheCurrentMonth() async throws {
        let ca = try TestCertificateAuthority(leafValidity: Date().addingTimeInterval(-400 * 86_400)...Date().addingTimeInterval(400 * 86_400))
        let setup = try CampaignTestSetup(ca: ca)
        defer { setup.remove() }
        let notifications = TestNotifications(ca: ca, bundleId: "GeniusParentingAI", environment: "Sandbox", appAppleId: 6_747_332_178)
        let otid = "3000000000870101"
        let start = Date().addingTimeInterval(-130 * 86_400)
        let millis = { @Sendable (date: Date) in Int64(date.timeIntervalSince1970 * 1000) }
        @Sendable func event(_ type: String, _ subtype: String?, period: Int, at: Date) throws -> Data {
            let purchased = start.addingTimeInterval(Double(period - 1) * 30 * 86_400)
            return try notifications.body(
                type: type,
                subtype: subtype,
                originalTransactionId: otid,
                appAccountToken: UUID(uuidString: "00000000-0000-0000-0000-000000870101"),
                signedDate: at,
                transactionFields: [
                    "productId": Self.monthly, "transactionId": "\(otid)\(period)", "purchaseDate": millis(purchased),
                    "expiresDate": millis(purchased.addingTimeInterval(30 * 86_400)), "originalPurchaseDate": millis(start),
                    "billingPlanType": "MONTHLY",
                    "commitmentInfo": [
                        "billingPeriodNumber": period, "totalBillingPeriods": 12,
                        "commitmentExpiresDate": millis(start.addingTimeInterval(360 * 86_400)), "commitmentPrice": 131_880,
                    ],
                ]
            )
        }
        try await withTestDatabase { client, url in
            let dependencies = try Dependencies.test(postgres: client, config: setup.config)
            func state() async throws -> String {
                var found = ""
                for try await line in try await client.query(
                    """
                    SELECT concat_ws(' ', status, last_transaction_id, billing_period_number, (expires_at > now())::text)
                    FROM reclaim.subscriptions WHERE original_transaction_id = \(otid)
                    """,
                    logger: logger
                ).decode(String.self) {
                    found = line
                }
                return found
            }
            var months = [try event("SUBSCRIBED", "INITIAL_BUY", period: 1, at: start)]
            for period in 2...5 {
                months.append(try event("DID_RENEW", nil, period: period, at: start.addingTimeInterval(Double(period - 1) * 30 * 86_400)))
            }
            try await processNotifications(months, client: client, dependencies: dependencies)
            #expect(try await state() == "active \(otid)5 5 true")

            // Month 2's payment refunded in month 5: the commitment continues.
            try await processNotifications(
                [try event("REFUND", nil, period: 2, at: Date().addingTimeInterval(-60))],
                client: client,
                dependencies: dependencies
            )
            #expect(try await state() == "active \(otid)5 5 true", "a past month's refund ended the commitment")
            #expect(
                try await firstInt(client, "SELECT count(*)::int FROM reclaim.notifications WHERE notification_type = 'REFUND'") == 1,
                "the refund is recorded"
            )

            // A subscription the old rule made refunded (month 2's expiry, transaction and period) is repaired from its
            // stored notifications; a dry run first changes nothing.
            try await client.query(
                """
                UPDATE reclaim.subscriptions SET status = 'refunded', last_transaction_id = \(otid + "2"), billing_period_number = 2,
                    expires_at = now() - interval '60 days'
                WHERE original_transaction_id = \(otid)
                """,
                logger: logger
            )
            let preview = try await RefundRepair.run(config: setup.config, url: url, app: nil, dryRun: true, logger: logger)
            #expect(preview.examined == 1 && preview.repaired.count == 1 && preview.dryRun)
            #expect(try await state() == "refunded \(otid)2 2 false")
            let repair = try await RefundRepair.run(config: setup.config, url: url, app: nil, dryRun: false, logger: logger)
            #expect(repair.repaired == ["\(otid) [GeniusParentingAI, Sandbox]"], "\(repair)")
            #expect(try await state() == "active \(otid)5 5 true", "repaired")
            #expect(try await RefundRepair.run(config: setup.config, url: url, app: nil, dryRun: false, logger: logger).examined == 0)

            // The current month's payment refunded: the commitment ends, and no repair undoes that.
            try await processNotifications([try event("REFUND", nil, period: 5, at: Date())], client: client, dependencies: dependencies)
            #expect(try await state() == "refunded \(otid)5 5 true")
            #expect(try await RefundRepair.run(config: setup.config, url: url, app: nil, dryRun: false, logger: logger).repaired.isEmpty)
            #expect(try await state() == "refunded \(otid)5 5 true")
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

    @Test("campaigns check refuses a campaign that would hand one plan's offer to the other, and says what to do")
    func offerPlanGuard() throws {
        func problems(_ extra: String) -> String {
            do {
                _ = try CampaignTestSetup(settings: extra)
                return ""
            } catch { return "\(error)" }
        }
        #expect(problems(Self.bothPlansCampaign).isEmpty)
        #expect(problems(Self.bothPlansCampaign + "\n    conditions: {billingPlans: [MONTHLY, BILLED_UPFRONT]}").isEmpty)
        // One identifier under both plans.
        #expect(
            problems(Self.bothPlansCampaign.replacingOccurrences(of: "RETAIN-U", with: "RETAIN-M")).contains(
                "names RETAIN-M for both MONTHLY and BILLED_UPFRONT"
            )
        )
        // The offer for any other plan is one plan's own.
        #expect(
            problems(Self.bothPlansCampaign.replacingOccurrences(of: "offerIdentifiers:", with: "offerIdentifier: RETAIN-M\n      offerIdentifiers:"))
                .contains("RETAIN-M is the MONTHLY offer (offerIdentifiers.MONTHLY)")
        )
        // Another campaign gives the MONTHLY offer to every plan: known as MONTHLY's from retain-monthly's condition.
        let everyone = """
              - id: retain-everyone
                app: GeniusParentingAI
                trigger: EXPIRED
                offer: {productId: ca.geniusparentingai.basic.monthly, offerIdentifier: RETAIN-MONTHLY}
            """
        let handed = problems(Self.monthlyCampaign + "\n" + everyone)
        #expect(handed.contains("campaign retain-everyone: offer.offerIdentifier: RETAIN-MONTHLY is the MONTHLY offer"), "\(handed)")
        #expect(handed.contains("would give it to BILLED_UPFRONT subscriptions"), "\(handed)")
        #expect(problems(Self.monthlyCampaign + "\n" + everyone + "\n    conditions: {billingPlans: [MONTHLY]}").isEmpty)
        // A plan the conditions admit without an offer of its own.
        #expect(
            problems(
                Self.bothPlansCampaign.replacingOccurrences(of: "{MONTHLY: RETAIN-M, BILLED_UPFRONT: RETAIN-U}", with: "{MONTHLY: RETAIN-M}")
                    + "\n    conditions: {billingPlans: [MONTHLY, BILLED_UPFRONT]}"
            ).contains("names no BILLED_UPFRONT offer")
        )
        #expect(
            problems(Self.bothPlansCampaign.replacingOccurrences(of: "MONTHLY: RETAIN-M", with: "WEEKLY: RETAIN-M")).contains("WEEKLY is not one of")
        )
        #expect(
            problems(Self.bothPlansCampaign.replacingOccurrences(of: "offerIdentifiers: {MONTHLY: RETAIN-M, BILLED_UPFRONT: RETAIN-U}", with: ""))
                .contains("offerIdentifier: missing")
        )
    }
}
