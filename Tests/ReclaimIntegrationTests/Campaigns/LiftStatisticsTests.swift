import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

@Suite("Lift with confidence intervals: the SQL against statsmodels", .poolWatchdog)
struct LiftStatisticsTests {
    let logger = TestPostgres.logger

    /// Counts with zeros, all-successes and tiny groups, as a dashboard meets them.
    static let cases: [(x1: Int64, n1: Int64, x2: Int64, n2: Int64)] = [
        (0, 1, 0, 1), (1, 1, 0, 1), (0, 5, 5, 5), (7, 20, 2, 15), (1, 3, 2, 3), (0, 10, 0, 12), (10, 10, 3, 9),
        (45, 100, 30, 100), (512, 4_000, 41, 450), (3, 7, 0, 2), (250, 250, 249, 250), (1, 10_000, 0, 9_000),
    ]

    /// Makes the counts the statistics read (`campaign_variant_counts_since`) these rows: bundle, environment,
    /// campaign, variant, treated, held out, treated redeemed, treated retained, held out retained.
    func counts(_ rows: [String], client: Database) async throws {
        try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE OR REPLACE FUNCTION reclaim.campaign_variant_counts_since(since timestamptz)
                    RETURNS TABLE (bundle_id text, environment text, campaign_id text, variant_id text, treated bigint, held_out bigint,
                                   treated_redeemed bigint, treated_retained_30d bigint, held_out_retained_30d bigint)
                    LANGUAGE sql STABLE AS $$ SELECT * FROM (VALUES \(rows.joined(separator: ", "))) AS t $$
                    """
            ),
            logger: logger
        )
    }

    @Test("wilson_interval and newcombe_interval equal statsmodels' to 1e-9 on counts with zeros and tiny groups")
    func againstStatsmodels() async throws {
        // statsmodels' proportion_confint(method="wilson") and confint_proportions_2indep(method="newcomb"): an
        // implementation Reclaim shares nothing with.
        let input = Self.cases.map { "\($0.x1) \($0.n1) \($0.x2) \($0.n2)" }.joined(separator: "\n")
        let script = """
            import sys
            from statsmodels.stats.proportion import proportion_confint, confint_proportions_2indep
            for line in sys.stdin:
                x1, n1, x2, n2 = map(int, line.split())
                w1 = proportion_confint(x1, n1, alpha=0.05, method="wilson")
                d = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
                print(repr(float(w1[0])), repr(float(w1[1])), repr(float(d[0])), repr(float(d[1])))
            """
        let result = try await runProcess("/usr/bin/env", ["python3", "-c", script], input: Data(input.utf8))
        try #require(result.status == 0, "statsmodels: \(result.errors)")
        let expected = result.output.split(separator: "\n").map { $0.split(separator: " ").map { Double($0)! } }
        try #require(expected.count == Self.cases.count)
        try await withTestDatabase { client, _ in
            for (index, c) in Self.cases.enumerated() {
                let rows = try await client.query(
                    """
                    SELECT w.lower, w.upper, d.lower, d.upper
                    FROM reclaim.wilson_interval(\(c.x1), \(c.n1)) AS w, reclaim.newcombe_interval(\(c.x1), \(c.n1), \(c.x2), \(c.n2)) AS d
                    """,
                    logger: logger
                )
                for try await (wl, wu, dl, du) in rows.decode((Double, Double, Double, Double).self) {
                    let want = expected[index]
                    for (got, wanted, what) in [
                        (wl, want[0], "wilson lower"), (wu, want[1], "wilson upper"), (dl, want[2], "newcombe lower"),
                        (du, want[3], "newcombe upper"),
                    ] {
                        #expect(abs(got - wanted) <= 1e-9, "\(c) \(what): SQL \(got), statsmodels \(wanted)")
                    }
                }
            }
            // No trials: no interval, not a division by zero.
            let empty = try await client.query("SELECT lower, upper FROM reclaim.wilson_interval(0, 0)", logger: logger)
            for try await (lower, upper) in empty.decode((Double?, Double?).self) {
                #expect(lower == nil && upper == nil)
            }
        }
    }

    @Test("the view's verdicts: better, worse, not yet distinguishable with the group size it needs, no holdout")
    func verdicts() async throws {
        try await withTestDatabase { client, url in
            // The view reads campaign_variant_counts_since; counts given here stand in for it (same columns, same types).
            try await counts(
                [
                    "('a'::text, 'Production'::text, 'better'::text, ''::text, 500::bigint, 500::bigint, 100::bigint, 300::bigint, 200::bigint)",
                    "('a', 'Production', 'worse', '', 500, 500, 100, 200, 300)",
                    "('a', 'Production', 'unclear', '', 20, 20, 5, 11, 9)",
                    "('a', 'Production', 'noholdout', '', 30, 0, 5, 20, 0)",
                    // Two huge groups a hair apart: the size needed passes bigint's limit, and must not fail the query.
                    "('a', 'Production', 'hair', '', 2000000000, 2000000001, 0, 1000000000, 1000000000)",
                ],
                client: client
            )
            let rows = try await client.query(
                "SELECT campaign_id, verdict, needed_per_group FROM reclaim.campaign_variant_lift ORDER BY campaign_id",
                logger: logger
            )
            var found: [String: (String, Int64?)] = [:]
            for try await (campaign, verdict, needed) in rows.decode((String, String, Int64?).self) { found[campaign] = (verdict, needed) }
            #expect(found["better"]?.0 == "better" && found["better"]?.1 == nil)
            #expect(found["worse"]?.0 == "worse")
            #expect(found["noholdout"]?.0 == "no holdout to compare")
            #expect(
                found["hair"]?.0 == "not yet distinguishable" && found["hair"]?.1 == 9_000_000_000_000_000_000,
                "\(String(describing: found["hair"]))"
            )
            // 0.55 against 0.45 in groups of 20 is noise; by n = z²(p1q1 + p2q2)/d² it would be distinguishable at 191.
            #expect(found["unclear"]?.0 == "not yet distinguishable")
            #expect(found["unclear"]?.1 == 191, "\(String(describing: found["unclear"]))")

            // `reclaim campaigns report`, as an operator reads it and as a script does.
            let reclaim = try Binaries.path("reclaim")
            let table = try await runProcess(reclaim, ["campaigns", "report", "--database-url", url.connectionString])
            #expect(table.status == 0, "\(table.errors)")
            #expect(table.output.contains("lift in retention   +20.0% ["), "\(table.output)")
            #expect(table.output.contains("needs about 191 per group"), "\(table.output)")
            let json = try await runProcess(
                reclaim,
                ["campaigns", "report", "--campaign", "worse", "--json", "--database-url", url.connectionString]
            )
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
            #expect(decoded.count == 1 && decoded[0]["verdict"] as? String == "worse", "\(json.output)")
            let sandbox = try await runProcess(reclaim, ["campaigns", "report", "--environment", "Sandbox", "--database-url", url.connectionString])
            #expect(sandbox.output.contains("no campaign has treated or held out anyone in Sandbox"))
        }
    }

    @Test("/console states each variant's lift with its interval and verdict, from the same view")
    func consoleLift() async throws {
        try await withTestDatabase { client, _ in
            try await counts(
                [
                    "('GeniusParentingAI'::text, 'Sandbox'::text, 'winback-expired'::text, 'thirty'::text, 20::bigint, 20::bigint, 5::bigint, 11::bigint, 9::bigint)",
                    "('GeniusParentingAI', 'Sandbox', 'winback-expired', 'fifty', 500, 20, 100, 300, 9)",
                ],
                client: client
            )
            // The funnel and the campaign-level lift the page shows beside it, likewise.
            try await client.query(
                """
                CREATE OR REPLACE VIEW reclaim.campaign_funnel AS SELECT * FROM (VALUES
                    ('GeniusParentingAI'::text, 'Sandbox'::text, 'winback-expired'::text, 540::bigint, 20::bigint, 0::bigint, 520::bigint,
                     400::bigint, 300::bigint, 105::bigint, 0::bigint, 0::bigint, 0::bigint, 0::bigint)
                ) AS t(bundle_id, environment, campaign_id, decided, held_out, skipped, offered, delivered, shown, redeemed, withdrawn, expired,
                       codes_issued, codes_redeemed)
                """,
                logger: logger
            )
            try await client.query(
                """
                CREATE OR REPLACE VIEW reclaim.campaign_lift AS SELECT * FROM (VALUES
                    ('GeniusParentingAI'::text, 'Sandbox'::text, 'winback-expired'::text, 520::bigint, 20::bigint, 105::bigint, 311::bigint, 9::bigint)
                ) AS t(bundle_id, environment, campaign_id, treated, held_out, treated_redeemed, treated_retained_30d, held_out_retained_30d)
                """,
                logger: logger
            )
            let report = try await client.withConnection(logger: logger) {
                try await ConsoleReport.load(bundleId: nil, environment: "Sandbox", connection: $0, logger: logger)
            }
            let campaign = try #require(report.campaigns.first)
            let text = ConsolePage.lift(campaign, report.lifts)
            #expect(text.contains("variant thirty: +10.0 percentage points (95% interval "), "\(text)")
            #expect(
                text.contains(": not yet distinguishable; a lift this large needs about 191 subscribers per group (groups of 20 and 20)"),
                "\(text)"
            )
            #expect(text.contains("variant fifty: +15.0 percentage points"), "\(text)")
        }
    }
}
