import Foundation
import ReclaimDomain
import ReclaimService
import ReclaimTestSupport
import Testing

/// The campaign engine's decisions, written out for every documented config example and every config the tests
/// write, on the suite's histories (Apple's sandbox corpus, replayed under each app and under other plans and
/// storefronts), compared with `Tests/Fixtures/campaign-decisions.txt`: what the engine decided before its
/// campaigns became a type per kind (docs/decisions/0007-a-type-per-campaign-kind.md). A refactoring of the rules
/// that changes one decision, one reason or one refusal fails here.
///
/// `RECLAIM_RECORD_DECISIONS=1` rewrites the file: only for a change of behaviour that is meant, and said in the
/// CHANGELOG.
@Suite(.poolWatchdog) struct CampaignKindEquivalenceTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/campaign-decisions.txt")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("every documented and tested config decides as it did before the campaign kinds became types")
    func decisionsUnchanged() async throws {
        let configs = try Self.configs()
        // The documented examples and the tests' configs, each at least once: a lost source would pass unseen.
        #expect(configs.filter { $0.name.hasPrefix("docs/") }.count >= 4)
        #expect(configs.filter { $0.name.hasPrefix("Tests/") }.count >= 10)
        let snapshots = try await Self.corpus()
        var lines: [String] = []
        for (name, yaml) in configs {
            lines.append("# \(name)")
            lines += Self.decisions(yaml: yaml, name: name, corpus: snapshots)
        }
        // The simulator names each live offer by a fresh UUID: the id is the one thing a replay does not repeat.
        let text = (lines.joined(separator: "\n") + "\n").replacing(/live offer [0-9a-f-]{36}/, with: "live offer (id)")
        if ProcessInfo.processInfo.environment["RECLAIM_RECORD_DECISIONS"] == "1" {
            try text.write(to: Self.golden, atomically: true, encoding: .utf8)
        }
        let before = try String(contentsOf: Self.golden, encoding: .utf8)
        let got = text.split(separator: "\n", omittingEmptySubsequences: false)
        let want = before.split(separator: "\n", omittingEmptySubsequences: false)
        let firstDifference = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            text == before,
            "decisions differ from \(Self.golden.lastPathComponent), first at line \(firstDifference.map { "\($0.offset + 1): got \($0.element.0), was \($0.element.1)" } ?? "the end: \(got.count) lines, were \(want.count)")"
        )
        #expect(want.count > 2_000, "the recorded decisions are too few to compare")
    }

    // MARK: The configs

    /// Every documented config with campaigns (docs' YAML; a `campaigns:` snippet is set into docs/configuration.md's
    /// example), deploy's example, and every YAML config the tests write in full (a literal without interpolation).
    static func configs() throws -> [(name: String, yaml: String)] {
        var configs: [(name: String, yaml: String)] = []
        let example = DocsContractTests.configurationExample
        let docs = repository.appendingPathComponent("docs")
        for page in try FileManager.default.contentsOfDirectory(atPath: docs.path).filter({ $0.hasSuffix(".md") }).sorted() {
            let text = try String(contentsOf: docs.appendingPathComponent(page), encoding: .utf8)
            for (index, match) in text.matches(of: /```yaml\n([\s\S]*?)```/).enumerated() {
                let block = String(match.output.1)
                guard block.hasPrefix("campaigns:") || block.contains("\ncampaigns:") else { continue }
                let yaml = block.hasPrefix("apps:") ? block : withCampaigns(of: block, in: example)
                configs.append(("docs/\(page) #\(index + 1)", yaml))
            }
        }
        configs.append(
            ("deploy/config.example.yaml", try String(contentsOf: repository.appendingPathComponent("deploy/config.example.yaml"), encoding: .utf8))
        )
        let tests = repository.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        for file in files where file != "ReclaimIntegrationTests/Campaigns/CampaignKindEquivalenceTests.swift" {
            let source = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            // Named by their order in the file, not their line: a test added above one must not rename it.
            var ordinal = 0
            for match in source.matches(of: /"""\n([\s\S]*?)\n\s*"""/) {
                let body = String(match.output.1)
                guard body.contains("campaigns:"), body.contains("apps:") else { continue }
                ordinal += 1
                configs.append(("Tests/\(file) #\(ordinal)", dedent(interpolated(body))))
            }
        }
        // The corpus's configs as the integration tests build them: plain, with a holdout, and as an experiment.
        for (name, setup) in [
            ("plain", try CampaignTestSetup()), ("holdout 20", try CampaignTestSetup(holdoutPercent: 20)),
            ("experiment", try CampaignTestSetup(winbackOffer: CampaignTestSetup.winbackExperiment)),
        ] {
            defer { setup.remove() }
            let yaml = try String(contentsOf: setup.configFile, encoding: .utf8).replacingOccurrences(of: setup.directory.path, with: "/tmp/setup")
            configs.append(("Tests/CampaignTestSetup \(name)", yaml))
        }
        return configs
    }

    /// A test's literal with its interpolations filled as the tests fill them by default: paths, ports and the values
    /// the literal's own test passes most often; an interpolation left unknown makes a config the loader refuses
    /// (recorded as such).
    static func interpolated(_ body: String) -> String {
        body.replacing(/\\\((?:[^()]|\([^()]*\))*\)/) { match -> String in
            let name = String(match.output)
            if name.contains("path") || name.contains("Path") { return "/tmp/reclaim-equivalence" }
            if name.contains("port") { return "5432" }
            if name.contains("issuerId") { return CampaignTestSetup.issuerId }
            if name.contains("holdoutPercent") { return "20" }
            if name.contains("app") && !name.contains("files.") { return AppleSandboxFixtures.bundleId }
            return ""
        }
    }

    /// A Swift multi-line literal's text without the indentation its closing quotes set.
    static func dedent(_ body: String) -> String {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
    }

    /// `example` with its top-level `campaigns:` replaced by `snippet`'s.
    static func withCampaigns(of snippet: String, in example: String) -> String {
        var kept: [Substring] = []
        var inCampaigns = false
        for line in example.split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = line.first, first != " ", first != "#", first != "-" { inCampaigns = line.hasPrefix("campaigns:") }
            if !inCampaigns { kept.append(line) }
        }
        return kept.joined(separator: "\n") + "\n" + snippet
    }

    // MARK: The histories

    /// The corpus's notifications about subscriptions, in signedDate order.
    static func corpus() async throws -> [SubscriptionSnapshot] {
        let verifier = AppleJWSVerifier()
        var snapshots: [SubscriptionSnapshot] = []
        for fixture in try AppleSandboxFixtures.all() {
            let notification = try await verifier.verifyNotification(fixture.signedPayload)
            if let uuid = UUID(uuidString: notification.payload.notificationUUID),
                let snapshot = SubscriptionSnapshot(notification, notificationUUID: uuid)
            {
                snapshots.append(snapshot)
            }
        }
        return snapshots.sorted { ($0.signedDate, $0.notificationUUID.uuidString) < ($1.signedDate, $1.notificationUUID.uuidString) }
    }

    /// The corpus as a subscriber of `app` on `plan` in `storefront` lived it (nil: as Apple sent it).
    static func history(_ corpus: [SubscriptionSnapshot], app: String, plan: String?, storefront: String?) -> [SubscriptionSnapshot] {
        corpus.map { snapshot in
            var moved = snapshot
            moved.bundleId = app
            if let plan { moved.transaction?.billingPlanType = plan }
            if let storefront { moved.transaction?.storefront = storefront }
            return moved
        }
    }

    static let profiles: [(plan: String?, storefront: String?)] = [(nil, nil), ("MONTHLY", "USA"), ("BILLED_UPFRONT", "FRA")]

    // MARK: The decisions

    static func decisions(yaml: String, name: String, corpus: [SubscriptionSnapshot]) -> [String] {
        let campaigns: [NotificationCampaign]
        let sheets: [CancelSheetCampaign]
        let flows: [CancelFlowCampaign]
        do {
            let all = try ReclaimConfig.parse(yaml: yaml, source: name).domainCampaigns()
            (campaigns, sheets, flows) = (all.of(NotificationCampaign.self), all.of(CancelSheetCampaign.self), all.of(CancelFlowCampaign.self))
        } catch {
            return ["refused: \(error)"]
        }
        guard !campaigns.isEmpty || !sheets.isEmpty || !flows.isEmpty else { return ["no campaigns"] }
        var lines: [String] = []
        for app in Set(campaigns.map(\.bundleId) + sheets.map(\.bundleId) + flows.map(\.bundleId)).sorted() {
            for profile in profiles {
                lines.append("## \(app) plan \(profile.plan ?? "as sent") storefront \(profile.storefront ?? "as sent")")
                let history = history(corpus, app: app, plan: profile.plan, storefront: profile.storefront)
                for backlog: TimeInterval in [0, 3 * 86_400] {
                    var simulator = CampaignSimulator(campaigns: campaigns)
                    for snapshot in history { simulator.process(snapshot, now: snapshot.signedDate.addingTimeInterval(backlog)) }
                    lines.append("### backlog \(Int(backlog))s")
                    for key in simulator.stories.keys.sorted() {
                        lines.append("subscriber \(key.originalTransactionId)")
                        for entry in simulator.stories[key] ?? [] where !entry.lines.isEmpty {
                            lines.append("  \(entry.signedDate.formatted(.iso8601)) \(entry.notification)")
                            lines += entry.lines.map { "    \($0)" }
                        }
                        if backlog == 0, let state = simulator.states[key], let history = simulator.histories[key] {
                            lines += fires(campaigns, state: state, history: history)
                            lines += cancelSheet(sheets, state: state, history: history)
                            lines += cancelFlow(flows, state: state, history: history)
                        }
                    }
                }
            }
            lines += cancelSheet(sheets, state: nil, history: OfferHistory(), bundleId: app)
        }
        return lines
    }

    /// Each delayed campaign fired on the subscriber's last state: in its window, past it, and as a commitment's or
    /// a period's deferral.
    static func fires(_ campaigns: [NotificationCampaign], state: SubscriptionState, history: OfferHistory) -> [String] {
        guard let last = state.lastSignedDate else { return [] }
        var lines: [String] = []
        for campaign in campaigns {
            for (label, now, commitment, period) in [
                ("in window", last.addingTimeInterval(max(campaign.delay, 60)), nil, nil),
                ("past window", last.addingTimeInterval(campaign.window + 60), nil, nil),
                ("commitment", last.addingTimeInterval(86_400), last.addingTimeInterval(10 * 86_400), nil),
                ("period", last.addingTimeInterval(86_400), nil, last.addingTimeInterval(5 * 86_400)),
            ] as [(String, Date, Date?, Date?)] {
                let decision = CampaignEvaluator.fire(
                    campaign,
                    state: state,
                    history: history,
                    triggeredAt: last,
                    commitmentEndsAt: commitment,
                    periodEndsAt: period,
                    now: now
                )
                lines.append("  fire \(campaign.id) \(label): \(describe(decision))")
            }
        }
        return lines
    }

    static func describe(_ decision: CampaignDecision) -> String {
        "\(decision.outcome.rawValue) variant \(decision.variant?.id ?? "-") offer \(decision.variant?.offerIdentifier ?? "-"): \(decision.reason)"
            + " until \(decision.deliverableUntil.formatted(.iso8601))"
    }

    /// The cancel flow's answer for the subscriber, for each survey answer and none, first and within the cooldown.
    static func cancelFlow(_ campaigns: [CancelFlowCampaign], state: SubscriptionState, history: OfferHistory) -> [String] {
        guard campaigns.contains(where: { $0.bundleId == state.bundleId }) else { return [] }
        let now = state.lastSignedDate?.addingTimeInterval(3600) ?? Date(timeIntervalSince1970: 1_790_000_000)
        var lines: [String] = []
        for reason in ReclaimConfig.App.defaultCancelReasons + [nil] as [String?] {
            let request = CancelFlowEvaluator.Request(
                bundleId: state.bundleId,
                originalTransactionId: state.originalTransactionId,
                reason: reason,
                canShow: Set(CancelFlowAnswerKind.allCases),
                now: now
            )
            let (decision, skipped) = CancelFlowEvaluator.decide(
                campaigns: campaigns,
                request: request,
                state: state,
                earlier: [],
                paused: [],
                discounts: history.discounts
            )
            lines.append(
                "  cancel flow \(reason ?? "none"): \(decision.map { "\($0.campaign.id) \($0.outcome.rawValue) variant \($0.variant?.id ?? "-") answer \($0.answer.map { "\($0)" } ?? "{}"): \($0.reason)" } ?? "none")"
                    + "; " + skipped.map { "\($0.campaignId) skipped: \($0.reason)" }.joined(separator: "; ")
            )
        }
        return lines
    }

    /// The cancel sheet's answer for the subscriber: first, repeated within the cooldown, repeated past it, with
    /// every campaign switched off, and with a spent discount.
    static func cancelSheet(_ campaigns: [CancelSheetCampaign], state: SubscriptionState?, history: OfferHistory, bundleId: String? = nil) -> [String]
    {
        let app = state?.bundleId ?? bundleId ?? ""
        guard campaigns.contains(where: { $0.bundleId == app }) else { return [] }
        let now = state?.lastSignedDate?.addingTimeInterval(3600) ?? Date(timeIntervalSince1970: 1_790_000_000)
        let request = CancelSheetEvaluator.Request(
            bundleId: app,
            originalTransactionId: state?.originalTransactionId ?? "2000000999999999",
            productId: state?.productId ?? "com.example.monthly",
            now: now
        )
        var lines: [String] = []
        func line(_ label: String, _ result: (decision: CancelSheetDecision?, skipped: [(campaignId: String, reason: String)])) {
            let skipped = result.skipped.map { "\($0.campaignId) skipped: \($0.reason)" }
            guard let decision = result.decision else {
                lines.append("  cancel sheet \(label): none; " + skipped.joined(separator: "; "))
                return
            }
            lines.append(
                "  cancel sheet \(label): \(decision.campaign.id) \(decision.outcome.rawValue) variant \(decision.variant?.id ?? "-") "
                    + "answer \(decision.answer.map { "\($0)" } ?? "{}") arm \(decision.armAnswer.map { "\($0)" } ?? "-") "
                    + "repeat \(decision.repeatOf != nil): \(decision.reason); " + skipped.joined(separator: "; ")
            )
        }
        let first = CancelSheetEvaluator.decide(
            campaigns: campaigns,
            request: request,
            state: state,
            earlier: [],
            paused: [],
            discounts: history.discounts
        )
        line("first", first)
        if let decision = first.decision {
            let past = CancelSheetEvaluator.PastDecision(
                id: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
                campaignId: decision.campaign.id,
                outcome: decision.outcome,
                variantId: decision.variant?.id,
                decidedAt: now.addingTimeInterval(-3600)
            )
            line("within cooldown", CancelSheetEvaluator.decide(campaigns: campaigns, request: request, state: state, earlier: [past], paused: []))
            var later = request
            later.now = now.addingTimeInterval(400 * 86_400)
            line("past cooldown", CancelSheetEvaluator.decide(campaigns: campaigns, request: later, state: state, earlier: [past], paused: []))
        }
        line(
            "switched off",
            CancelSheetEvaluator.decide(campaigns: campaigns, request: request, state: state, earlier: [], paused: Set(campaigns.map(\.id)))
        )
        let spent = (0..<50).map { DiscountBudget.Spent(at: now.addingTimeInterval(-Double($0) * 60), offer: "spent-\($0)") }
        line(
            "budget spent",
            CancelSheetEvaluator.decide(campaigns: campaigns, request: request, state: state, earlier: [], paused: [], discounts: spent)
        )
        return lines
    }
}
