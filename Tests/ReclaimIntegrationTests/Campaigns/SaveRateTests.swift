import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

/// Cancel-sheet decisions settled as saved or lost at their window's end, and the save rates against statsmodels.
@Suite("Save rates on the cancel sheet", .poolWatchdog)
struct SaveRateTests {
    let logger = TestPostgres.logger

    /// A first decision `days` ago, with the subscription's state now (nil: none known) and, for `redeemed`, the
    /// offer's redemption inside the window.
    struct Past {
        var id: String
        var outcome: String
        var variant: String?
        var answer: String
        var days: Double
        var autoRenew: Bool?
        var status = "active"
        var renewsTo: String? = nil
        var redeemed = false
    }

    func insert(_ history: [Past], client: Database) async throws {
        for past in history {
            let decided = Date().addingTimeInterval(-past.days * 86_400)
            try await client.query(
                """
                INSERT INTO reclaim.cancel_sheet_decisions (id, campaign_id, bundle_id, environment, original_transaction_id, request_identifier,
                    product_id, outcome, shadow, variant_id, answer, message_identifier, answer_product_id, offer_identifier, reason, decided_at)
                VALUES (\(UUID()), 'sheet', 'com.example.app', 'Production', \(past.id), \(UUID().uuidString), 'com.example.monthly', \(past.outcome),
                    false, \(past.variant), \(past.answer), \(past.answer == "nothing" ? nil : "6f1c0a52-8a0e-4c4e-9d55-0b8f4f0f6a13"),
                    \(past.answer == "promotional_offer" ? "com.example.monthly" : past.answer == "alternate_product" ? "com.example.yearly" : nil),
                    \(past.answer == "promotional_offer" ? "SAVE50" : nil), 'test', \(decided))
                """,
                logger: logger
            )
            if let autoRenew = past.autoRenew {
                try await client.query(
                    """
                    INSERT INTO reclaim.subscriptions (bundle_id, environment, original_transaction_id, product_id, status, auto_renew, auto_renew_product_id)
                    VALUES ('com.example.app', 'Production', \(past.id), 'com.example.monthly', \(past.status), \(autoRenew), \(past.renewsTo))
                    """,
                    logger: logger
                )
            }
            if past.redeemed {
                let uuid = UUID()
                try await client.query(
                    """
                    INSERT INTO reclaim.notifications (notification_uuid, notification_type, bundle_id, environment, signed_date, original_transaction_id, signed_payload)
                    VALUES (\(uuid), 'OFFER_REDEEMED', 'com.example.app', 'Production', \(decided.addingTimeInterval(3600)), \(past.id), 'x')
                    """,
                    logger: logger
                )
                try await client.query(
                    """
                    INSERT INTO reclaim.offer_redemptions (notification_uuid, bundle_id, environment, original_transaction_id, offer_identifier, redeemed_at, offer_type)
                    VALUES (\(uuid), 'com.example.app', 'Production', \(past.id), 'SAVE50', \(decided.addingTimeInterval(3600)), 2)
                    """,
                    logger: logger
                )
            }
        }
    }

    @Test("saved, lost and undecided settled at the window's end; the save rate's Wilson and the lift's Newcombe interval equal statsmodels'")
    func settledAgainstStatsmodels() async throws {
        var history: [Past] = []
        var n = 0
        func id() -> String {
            n += 1
            return String(6_000_000_000_000_000 + n)
        }
        // The offer arm, settled: 5 redeemed the offer (auto-renew then off: saved all the same), 3 auto-renew on,
        // 4 auto-renew off or expired.
        for _ in 0..<5 {
            history.append(
                Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 40, autoRenew: false, redeemed: true)
            )
        }
        for _ in 0..<3 {
            history.append(Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 40, autoRenew: true))
        }
        for _ in 0..<3 {
            history.append(Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 40, autoRenew: false))
        }
        history.append(
            Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 40, autoRenew: true, status: "expired")
        )
        // Undecided: the window is open (a save already visible does not count before it ends), or no state is known.
        for _ in 0..<2 { history.append(Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 3, autoRenew: true)) }
        history.append(Past(id: id(), outcome: "answered", variant: "half", answer: "promotional_offer", days: 40, autoRenew: nil))
        // The switch arm: 2 moved to the yearly plan, 1 lost.
        let switched = id()
        history.append(
            Past(
                id: switched,
                outcome: "answered",
                variant: "yearly",
                answer: "alternate_product",
                days: 40,
                autoRenew: true,
                renewsTo: "com.example.yearly"
            )
        )
        history.append(
            Past(
                id: id(),
                outcome: "answered",
                variant: "yearly",
                answer: "alternate_product",
                days: 40,
                autoRenew: true,
                renewsTo: "com.example.yearly"
            )
        )
        history.append(Past(id: id(), outcome: "answered", variant: "yearly", answer: "alternate_product", days: 40, autoRenew: false))
        // The holdout: 3 saved, 7 lost, 1 undecided.
        for _ in 0..<3 { history.append(Past(id: id(), outcome: "held_out", variant: nil, answer: "nothing", days: 40, autoRenew: true)) }
        for _ in 0..<7 {
            history.append(Past(id: id(), outcome: "held_out", variant: nil, answer: "nothing", days: 40, autoRenew: false, status: "expired"))
        }
        history.append(Past(id: id(), outcome: "held_out", variant: nil, answer: "nothing", days: 1, autoRenew: false))
        let recorded = history

        let script = """
            from statsmodels.stats.proportion import proportion_confint, confint_proportions_2indep
            for x1, n1, x2, n2 in [(8, 12, 3, 10), (2, 3, 3, 10)]:
                w = proportion_confint(x1, n1, alpha=0.05, method="wilson")
                d = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
                print(repr(float(w[0])), repr(float(w[1])), repr(float(d[0])), repr(float(d[1])))
            """
        let result = try await runProcess("/usr/bin/env", ["python3", "-c", script])
        try #require(result.status == 0, "statsmodels: \(result.errors)")
        let expected = result.output.split(separator: "\n").map { $0.split(separator: " ").map { Double($0)! } }

        try await withTestDatabase { client, url in
            try await insert(recorded, client: client)
            let settled = try await client.transaction(logger: logger) {
                try await CancelSheetStore.settle(limit: 1000, connection: $0, logger: logger)
            }
            #expect(settled == recorded.filter { $0.days > 30 }.count)
            // Final: settling again changes nothing, even after the state moves on.
            try await client.query("UPDATE reclaim.subscriptions SET auto_renew = true", logger: logger)
            #expect(
                try await client.transaction(logger: logger) { try await CancelSheetStore.settle(limit: 1000, connection: $0, logger: logger) } == 0
            )
            let product = try await client.query(
                "SELECT saved_product_id FROM reclaim.cancel_sheet_decisions WHERE original_transaction_id = \(switched)",
                logger: logger
            )
            for try await saved in product.decode(String?.self) { #expect(saved == "com.example.yearly") }

            let rows = try await client.withConnection(logger: logger) {
                try await SaveRateStatistics.load(environment: "Production", campaign: nil, connection: $0, logger: logger)
            }
            let half = try #require(rows.first { $0.variantId == "half" })
            let yearly = try #require(rows.first { $0.variantId == "yearly" })
            #expect(half.saved == 8 && half.lost == 4 && half.undecided == 3 && half.heldOutSaved == 3 && half.heldOutLost == 7, "\(half)")
            #expect(yearly.saved == 2 && yearly.lost == 1, "\(yearly)")
            for (row, figures) in zip([half, yearly], expected) {
                #expect(
                    abs((row.saveRate.lower ?? -1) - figures[0]) < 1e-9 && abs((row.saveRate.upper ?? -1) - figures[1]) < 1e-9,
                    "\(row) \(figures)"
                )
                #expect(abs((row.lift.lower ?? -9) - figures[2]) < 1e-9 && abs((row.lift.upper ?? -9) - figures[3]) < 1e-9, "\(row) \(figures)")
            }

            // /console states it.
            #expect(
                ConsolePage.saveRate(half).contains("sheet, variant half [com.example.app]: saved 8 of 12, 66.7% (95% interval "),
                "\(ConsolePage.saveRate(half))"
            )

            // `reclaim campaigns report` prints it; its --json names the save rate.
            let reclaim = try Binaries.path("reclaim")
            let table = try await runProcess(reclaim, ["campaigns", "report", "--database-url", url.connectionString])
            #expect(table.output.contains("sheet, variant half [com.example.app], cancel sheet"), "\(table.output)\(table.errors)")
            #expect(table.output.contains("save rate           66.7% ["), "\(table.output)")
            let json = try await runProcess(reclaim, ["campaigns", "report", "--json", "--database-url", url.connectionString])
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]], "\(json.output)")
            let first = try #require(decoded.first { $0["variantId"] as? String == "half" })
            #expect(
                first["kind"] as? String == "cancel-sheet"
                    && ((first["saveRate"] as? [String: Any])?["value"] as? Double).map { abs($0 - 8.0 / 12) < 1e-12 } == true
            )
        }
    }
}
