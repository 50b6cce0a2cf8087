import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// `reclaim campaigns check`, `simulate` and `report`: the campaign config, checked and tried out, and what the
/// campaigns did.
public enum CampaignTasks {
    /// Validates the config (done by loading it), the signing keys and what `serve` checks of the forwarding targets
    /// and webhooks (their secret files read, their host names resolved and judged); returns a summary of each
    /// campaign, after a warning for each target whose name does not resolve here.
    ///
    /// Campaigns that hand out offer codes are checked against their pools in the database at `database`
    /// (``CodePoolCheck``): without one, such a config is refused.
    public static func check(
        _ config: ReclaimConfig,
        database: DatabaseURL? = nil,
        logger: Logger = Logger(label: "reclaim.check")
    ) async throws -> String {
        _ = try config.offerSigners()
        let campaigns = try config.domainCampaigns()
        let notificationCampaigns = campaigns.of(NotificationCampaign.self)
        let outbound =
            try await outboundWarnings(config) + (try await MessageApprovalCheck.run(config, logger: logger))
            + (try await CodePoolCheck.run(config, campaigns: notificationCampaigns, url: database, logger: logger))
        let importWarnings = notificationCampaigns.filter {
            $0.conditions.expiresWithin == nil && $0.conditions.lapsedWithin == nil && Backfill.canFire($0)
        }
        .sorted { $0.id < $1.id }
        .map {
            "warning: campaign \($0.id) can fire on a base imported by reclaim backfill --evaluate (on \($0.trigger)) with no time bound: "
                + "add conditions.expiresWithin (a running subscription's period ends within, e.g. 14d) or lapsedWithin (lapsed within, e.g. 30d)"
        }
        let warnings = outbound + importWarnings
        guard !campaigns.isEmpty else { return (warnings + ["no campaigns configured"]).joined(separator: "\n") }
        var lines = warnings + ["\(campaigns.count) campaign\(campaigns.count == 1 ? "" : "s") OK:"]
        for campaign in campaigns.sorted(by: { ($0.bundleId, $1.priority, $0.id) < ($1.bundleId, $0.priority, $1.id) }) {
            let variants = campaign.variants
            // An arm that answers (the cancel sheet's) is written as its answer; an offer as product and offer.
            let offers =
                variants.contains { $0.answer != nil }
                ? variants.map { answerText($0) }.joined(separator: ", ")
                : variants.count == 1 && variants[0].id.isEmpty
                    ? offerText(variants[0])
                    : variants.map { "\($0.id) \(offerText($0)) ×\($0.weight)" }.joined(separator: ", ")
            var line = "  \(campaign.id) [\(campaign.bundleId)] on \(campaign.triggerName) → \(offers)"
            line += ", priority \(campaign.priority), holdout \(campaign.holdoutPercent)%"
            line +=
                ", deliverable \(CampaignEvaluatorFormat.duration(campaign.deliverableFor)), cooldown \(CampaignEvaluatorFormat.duration(campaign.cooldown))"
            if let maximum = campaign.maxOffersPerSubscriber { line += ", at most \(maximum) per subscriber" }
            line += campaign.checkNotes.map { ", \($0)" }.joined()
            if let startsAt = campaign.startsAt { line += ", from \(startsAt.formatted(.iso8601))" }
            if let endsAt = campaign.endsAt { line += ", until \(endsAt.formatted(.iso8601))" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// `P / O`, or with offers per billing plan `P / MONTHLY O1, BILLED_UPFRONT O2[, any other O]`.
    private static func offerText(_ variant: CampaignVariant) -> String {
        if let offer = variant.offerCodes { return "offer codes of \(offer)" }
        guard !variant.offerIdentifiersByPlan.isEmpty else { return "\(variant.productId) / \(variant.offerIdentifier)" }
        let plans = variant.offerIdentifiersByPlan.sorted { $0.key > $1.key }.map { "\($0.key) \($0.value)" }
        return "\(variant.productId) / "
            + (plans + (variant.offerIdentifier.isEmpty ? [] : ["any other \(variant.offerIdentifier)"])).joined(separator: ", ")
    }

    /// A cancel-sheet arm in a line: `[id ×weight] message M`, `switch to P (M)`, `offer P / O (M, v2)`.
    private static func answerText(_ variant: CampaignVariant) -> String {
        let arm = variant.id.isEmpty ? "" : "\(variant.id) ×\(variant.weight): "
        switch variant.answer {
        case .message(let id)?: return arm + "message \(id)"
        // A cancel-flow arm has no Apple message and no signature format to choose (both StoreKit forms are handed out).
        case .switchTo(let product, let id, let plan)?:
            return arm + "switch to \(product)\(plan.map { " \($0.rawValue)" } ?? "")" + (id.isEmpty ? "" : " (message \(id))")
        case .offer(_, _, let id, let format)?:
            return arm + "offer \(offerText(variant))" + (id.isEmpty ? "" : " (message \(id), \(format.rawValue))")
        case nil: return arm + "nothing"
        }
    }

    /// The targets' secrets read as `serve` reads them (a problem stops the check), and each host name resolved as the
    /// sender will: a private answer is a problem; no answer a warning (the sender retries until the name resolves).
    static func outboundWarnings(_ config: ReclaimConfig) async throws -> [String] {
        let targets = try config.outboundTargets()
        guard !config.forwarding.allowPrivate else { return [] }
        var problems: [String] = []
        var warnings: [String] = []
        for target in targets where AddressPolicy.numeric(target.host) == nil {
            let answers = await AddressPolicy.resolve(target.host)
            if answers.isEmpty {
                warnings.append("warning: \(target.shownURL): \(target.host) does not resolve here; its sends are retried until it does")
            } else if let refused = answers.first(where: { AddressPolicy.refusal($0) != nil }) {
                problems.append(
                    "\(target.shownURL): \(target.host) resolves to \(AddressPolicy.text(refused)), \(AddressPolicy.refusal(refused) ?? ""); "
                        + "set forwarding.allowPrivate: true to allow private addresses"
                )
            }
        }
        if !problems.isEmpty { throw ConfigError(problems.joined(separator: "\n")) }
        return warnings
    }

    /// Verifies every notification file in `directory` (a `{"signedPayload": …}` body or a bare JWS) against the
    /// config's trusted roots, replays them in signedDate order through state and rules in memory, and tells per
    /// subscriber what would be offered and why. `now` nil evaluates each notification at its own signedDate, as
    /// if processed when it arrived.
    public static func simulate(_ config: ReclaimConfig, directory: URL, now: Date?) async throws -> String {
        let verifier = AppleJWSVerifier(trust: try config.rootTrust())
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { ["json", "jws", "txt"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        var snapshots: [SubscriptionSnapshot] = []
        var refused: [String] = []
        var ignored = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let jws = (try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(text.utf8)).signedPayload) ?? text
            do {
                let notification = try await verifier.verifyNotification(jws)
                guard let uuid = UUID(uuidString: notification.payload.notificationUUID),
                    let snapshot = SubscriptionSnapshot(notification, notificationUUID: uuid)
                else {
                    ignored += 1
                    continue
                }
                snapshots.append(snapshot)
            } catch {
                refused.append("  \(file.lastPathComponent): \(error)")
            }
        }
        var simulator = CampaignSimulator(campaigns: try config.notificationCampaigns())
        for snapshot in snapshots.sorted(by: { $0.signedDate < $1.signedDate }) {
            simulator.process(snapshot, now: now ?? snapshot.signedDate)
        }
        var out = [
            "\(snapshots.count) notifications about subscriptions replayed, \(ignored) without one (TEST, summaries), \(refused.count) refused"
        ]
        if !refused.isEmpty { out += ["refused (not verified against the config's roots):"] + refused }
        for key in simulator.stories.keys.sorted() {
            let state = simulator.states[key]
            out.append("")
            out.append(
                "subscriber \(key.originalTransactionId) [\(key.bundleId), \(key.environment)]"
                    + (state?.appAccountToken.map { " appAccountToken \($0.uuidString.lowercased())" } ?? "")
            )
            for entry in simulator.stories[key] ?? [] where !entry.lines.isEmpty {
                out.append("  \(entry.signedDate.formatted(.iso8601)) \(entry.notification)")
                out += entry.lines.map { "      \($0)" }
            }
            if let live = simulator.histories[key]?.liveOffer {
                out.append("  → would now hold: \(live.campaignId) (\(live.productId) / \(live.offerIdentifier))")
            } else {
                out.append("  → would now hold: no offer")
            }
        }
        return out.joined(separator: "\n")
    }

    /// What each campaign (each variant of an experiment) did against its holdout, from
    /// `reclaim.campaign_variant_lift`: a table for a terminal, or JSON.
    public static func report(
        campaign: String?,
        environment: String,
        since: Date? = nil,
        json: Bool,
        url: DatabaseURL,
        logger: Logger
    ) async throws -> String {
        let (rows, saves, sources, doors, flows) = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { connection in
                (
                    try await LiftStatistics.load(environment: environment, campaign: campaign, since: since, connection: connection, logger: logger),
                    // Cancel-sheet decisions settle at their window's end; --since does not apply to them.
                    try await SaveRateStatistics.load(environment: environment, campaign: campaign, connection: connection, logger: logger),
                    // All time, live and backfill apart: an imported base's decisions are not the live funnel's.
                    try await DecisionSourceCounts.load(environment: environment, campaign: campaign, connection: connection, logger: logger),
                    // All time: which door won back whom, Apple's beside Reclaim's.
                    try await WinBackDoors.load(environment: environment, campaign: campaign, connection: connection, logger: logger),
                    // The app's cancel flow: open windows count as kept so far, beside the settled save rate.
                    try await CancelFlowSaveRates.load(environment: environment, campaign: campaign, connection: connection, logger: logger)
                )
            }
        }
        if json {
            return try ReportJSON.render(
                rows.map(ReportRow.lift) + saves.map(ReportRow.saveRate) + sources.map(ReportRow.decisions) + doors.map(ReportRow.door)
                    + flows.map(ReportRow.cancelFlow)
            )
        }
        return reportText(
            environment: environment,
            campaign: campaign,
            since: since,
            rows: rows,
            saves: saves,
            sources: sources,
            doors: doors,
            flows: flows
        )
    }

    /// The report as a terminal shows it (docs/campaigns.md quotes it, marked `<!-- output: campaigns-report -->`).
    public static func reportText(
        environment: String,
        campaign: String? = nil,
        since: Date? = nil,
        rows: [LiftStatistics],
        saves: [SaveRateStatistics] = [],
        sources: [DecisionSourceCounts] = [],
        doors: [WinBackDoors] = [],
        flows: [CancelFlowSaveRates] = []
    ) -> String {
        var decisionLines: [String] = []
        if sources.contains(where: { $0.source == "backfill" }) {
            decisionLines.append("Decisions by source, all time (backfill: state imported by reclaim backfill --evaluate):")
            for row in sources {
                decisionLines.append(
                    "\(row.campaignId)\(row.variantId.isEmpty ? "" : ", variant \(row.variantId)") [\(row.bundleId)] \(row.source): "
                        + "offered \(row.offered), held out \(row.heldOut), skipped \(row.skipped)"
                )
            }
        }
        decisionLines += doorLines(doors)
        guard !rows.isEmpty || !saves.isEmpty || !flows.isEmpty else {
            if !decisionLines.isEmpty { return decisionLines.joined(separator: "\n") }
            return "no campaign has treated or held out anyone in \(environment)" + (campaign.map { " (campaign \($0))" } ?? "")
        }
        func percent(_ rate: LiftStatistics.Rate, signed: Bool = false) -> String {
            IntervalText.percent(rate.value, lower: rate.lower, upper: rate.upper, signed: signed)
        }
        let period = since.map { "subscribers first triggered since \($0.formatted(.iso8601))" } ?? "all time"
        var lines = ["\(environment), \(period), 95% intervals in brackets (Wilson; Newcombe for the lift):"]
        for row in rows {
            lines.append("\(row.campaignId)\(row.variantId.isEmpty ? "" : ", variant \(row.variantId)") [\(row.bundleId)]")
            lines.append("  treated \(row.treated), held out \(row.heldOut)")
            lines.append("  redeemed            \(percent(row.redemptionRate))")
            lines.append("  retained 30 days    treated \(percent(row.treatedRetention)), held out \(percent(row.heldOutRetention))")
            var verdict = "  lift in retention   \(percent(row.retentionLift, signed: true)): \(row.verdict)"
            if let needed = row.neededPerGroup { verdict += " (a lift this large needs about \(needed) per group)" }
            lines.append(verdict)
        }
        for row in saves {
            lines.append("\(row.campaignId)\(row.variantId.isEmpty ? "" : ", variant \(row.variantId)") [\(row.bundleId)], cancel sheet")
            lines.append(
                "  saved \(row.saved), lost \(row.lost), undecided \(row.undecided); held out saved \(row.heldOutSaved), lost \(row.heldOutLost)"
            )
            lines.append("  save rate           \(percent(row.saveRate)), held out (Apple's fallback) \(percent(row.heldOutSaveRate))")
            lines.append("  lift in save rate   \(percent(row.lift, signed: true))")
        }
        if !flows.isEmpty {
            lines.append("Cancel flow (lost: auto-renew turned off or refunded within the save window; kept: not lost so far):")
        }
        for row in flows {
            let reason = row.surveyReason == "*" ? "every reason" : "reason \(row.surveyReason)"
            lines.append("\(row.campaignId)\(row.variantId.isEmpty ? "" : ", variant \(row.variantId)") [\(row.bundleId)], \(reason)")
            lines.append(
                "  saved \(row.saved), lost \(row.lost), open \(row.open); held out saved \(row.heldOutSaved), lost \(row.heldOutLost), open \(row.heldOutOpen)"
            )
            lines.append("  save rate           \(percent(row.saveRate)), lift \(percent(row.lift, signed: true))")
            lines.append(
                "  kept so far         \(percent(row.keptRate)), held out \(percent(row.heldOutKeptRate)), lift \(percent(row.keptLift, signed: true))"
            )
        }
        return (lines + decisionLines).joined(separator: "\n")
    }
}

extension CampaignTasks {
    /// The report's doors: each campaign beside the discounts Apple's doors gave (`reclaim.win_back_doors`).
    static func doorLines(_ doors: [WinBackDoors]) -> [String] {
        guard doors.contains(where: { $0.door != "campaign" || $0.appleListed ?? 0 > 0 }) else { return [] }
        var lines = ["Which door won back whom, all time (subscribers who redeemed):"]
        let names = [
            "apple_win_back": "Apple's win-back offers (offerType 4)",
            "app_store_connect_retention": "App Store Connect's retention offers (offerType 5)",
            "offer_code_outside_reclaim": "offer codes Reclaim did not give (offerType 3)",
        ]
        for door in doors {
            if let campaign = door.campaignId {
                lines.append(
                    "  \(campaign) [\(door.bundleId)]: offered \(door.subscribersOffered ?? 0), redeemed \(door.subscribersRedeemed); "
                        + "Apple listed win-back offers at \(door.appleListed ?? 0) of its \(door.decisions ?? 0) decisions, stood aside at \(door.stoodAside ?? 0)"
                )
            } else {
                lines.append("  \(names[door.door] ?? door.door) [\(door.bundleId)]: redeemed \(door.subscribersRedeemed)")
            }
        }
        return lines
    }
}

/// A row of `reclaim campaigns report --json`: a notification campaign's lift, a cancel-sheet arm's save rate
/// (`"kind": "cancel-sheet"`, `saveRate`), a campaign's decisions from one source (`"kind": "decisions"`, `source`
/// `live` or `backfill`), a cancel-flow arm by survey answer (`"kind": "cancel-flow"`), or a door (`"kind": "door"`: a campaign or one of Apple's, ``WinBackDoors``).
enum ReportRow: Encodable {
    case lift(LiftStatistics)
    case saveRate(SaveRateStatistics)
    case decisions(DecisionSourceCounts)
    case door(WinBackDoors)
    case cancelFlow(CancelFlowSaveRates)

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .lift(let row): try row.encode(to: encoder)
        case .saveRate(let row): try row.encode(to: encoder)
        case .decisions(let row): try row.encode(to: encoder)
        case .door(let row): try row.encode(to: encoder)
        case .cancelFlow(let row): try row.encode(to: encoder)
        }
    }
}
