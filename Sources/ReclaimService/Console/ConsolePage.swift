import Foundation
import ReclaimStore

/// The values the /console templates render, formatted for people. Mustache reads the stored properties.
struct ConsolePage {
    struct Notification {
        let type: String
        let subtype: String
        let hasSubtype: Bool
        let count: Int
    }

    struct Queue {
        let state: String
        let jobs: Int
    }

    struct DeadJob {
        let id: Int64
        let kind: String
        let attempts: Int
        let diedAt: String
        let lastError: String
    }

    struct Target {
        let kind: String
        let bundleId: String
        let url: String
        let state: String
        let failing: Bool
        let queued: Int
        let retrying: Int
        let dead: Int
        let oldest: String
        let lastError: String
    }

    struct Campaign {
        let bundleId: String
        let campaignId: String
        let decided: Int
        let heldOut: Int
        let offered: Int
        let delivered: Int
        let shown: Int
        let redeemed: Int
        let treated: Int
        let liftHeldOut: Int
        let treatedRedeemed: String
        let treatedRetained: String
        let heldOutRetained: String
        let lift: String
        let funnelChart: String
    }

    struct Rejection {
        let receivedAt: String
        let endpoint: String
        let problem: String
        let reason: String
    }

    struct ProblemCount {
        let problem: String
        let count: Int
    }

    struct Line {
        let text: String
    }

    struct Channel {
        let bundleId: String
        let channel: String
        let redemptions: Int
    }

    struct Query {
        let id: String
        let source: String
        let sql: String
    }

    let title = "Reclaim console"
    let refresh: Int
    let scope: String
    let generatedAt: String
    let notificationsTotal: Int
    let notificationsChart: String
    let notifications: [Notification]
    let hasNotifications: Bool
    let queue: [Queue]
    let oldestWaiting: String
    let deadJobsCount: Int
    let deadJobs: [DeadJob]
    let hasDeadJobs: Bool
    let targets: [Target]
    let hasTargets: Bool
    let failingTargets: Int
    let campaigns: [Campaign]
    /// Cancel-sheet arms' save rates, a sentence each.
    let saveRates: [Line]
    let discountChannels: [Channel]
    let hasDiscountChannels: Bool
    /// The environment of the campaigns' numbers, and a link to the other one.
    let environment: String
    let otherEnvironment: String
    let showsRejections: Bool
    let rejections: [Rejection]
    let hasRejections: Bool
    let rejectionsPerProblem: [ProblemCount]
    let hasRejectionsPerProblem: Bool
    let queries: [Query]
    /// The subscriber search (admin keys: it shows one person's data).
    let searchesSubscribers: Bool
    /// An admin key: the page links the audit log.
    let readsAudit: Bool
    /// The apps stopped (`reclaim stop`) this page's key sees, one line each.
    let stops: [String]
    let isStopped: Bool

    init(
        report: ConsoleReport,
        bundleId: String?,
        environment: String = "Production",
        now: Date = Date(),
        refresh: Int = 30,
        searchesSubscribers: Bool = false,
        readsAudit: Bool = false,
        stops: [String] = []
    ) {
        self.searchesSubscribers = searchesSubscribers
        self.readsAudit = readsAudit
        self.stops = stops
        self.isStopped = !stops.isEmpty
        self.refresh = refresh
        self.environment = environment
        otherEnvironment = environment == "Production" ? "Sandbox" : "Production"
        scope = bundleId.map { "app \($0)" } ?? "every app"
        generatedAt = Self.time(now)
        notifications = report.notifications.map {
            Notification(type: $0.type, subtype: $0.subtype, hasSubtype: !$0.subtype.isEmpty, count: $0.count)
        }
        notificationsTotal = report.notifications.reduce(0) { $0 + $1.count }
        notificationsChart = ConsoleCharts.hourly(report.notificationsPerHour)
        hasNotifications = !notifications.isEmpty
        queue = report.queue.map { Queue(state: $0.state, jobs: $0.jobs) }
        oldestWaiting = report.queue.compactMap(\.oldestWaitingSeconds).max().map(Self.duration) ?? "none"
        deadJobsCount = report.queue.first { $0.state == "dead" }?.jobs ?? 0
        deadJobs = report.deadJobs.map {
            DeadJob(id: $0.id, kind: $0.kind, attempts: $0.attempts, diedAt: Self.time($0.diedAt), lastError: String($0.lastError.prefix(2000)))
        }
        hasDeadJobs = !deadJobs.isEmpty
        targets = report.outbound.map { t in
            Target(
                kind: t.kind,
                bundleId: t.bundleId,
                url: OutboundURL.redacted(t.url),
                state: t.pausedAt.map { "paused since \(Self.time($0))" } ?? (t.isFailing ? "failing" : "sending"),
                failing: t.isFailing,
                queued: t.queued,
                retrying: t.retrying,
                dead: t.dead,
                oldest: t.queued > 0 ? Self.duration(t.oldestAgeSeconds) : "none",
                lastError: String((t.lastError ?? "").prefix(500))
            )
        }
        hasTargets = !targets.isEmpty
        failingTargets = targets.filter(\.failing).count
        campaigns = report.campaigns.map { c in
            Campaign(
                bundleId: c.bundleId,
                campaignId: c.campaignId,
                decided: c.decided,
                heldOut: c.heldOut,
                offered: c.offered,
                delivered: c.delivered,
                shown: c.shown,
                redeemed: c.redeemed,
                treated: c.treated,
                liftHeldOut: c.liftHeldOut,
                treatedRedeemed: Self.share(c.treatedRedeemed, of: c.treated),
                treatedRetained: Self.share(c.treatedRetained30d, of: c.treated),
                heldOutRetained: Self.share(c.heldOutRetained30d, of: c.liftHeldOut),
                lift: Self.lift(c, report.lifts),
                funnelChart: ConsoleCharts.funnel([("issued", c.offered), ("delivered", c.delivered), ("shown", c.shown), ("redeemed", c.redeemed)])
            )
        }
        saveRates = report.saveRates.map { Line(text: Self.saveRate($0)) }
        discountChannels = report.discountChannels.map { Channel(bundleId: $0.bundleId, channel: $0.channel, redemptions: $0.redemptions) }
        hasDiscountChannels = !discountChannels.isEmpty
        showsRejections = report.rejections != nil
        rejections = (report.rejections ?? []).map {
            Rejection(receivedAt: Self.time($0.receivedAt), endpoint: $0.endpoint, problem: $0.problem, reason: String($0.reason.prefix(500)))
        }
        hasRejections = !rejections.isEmpty
        rejectionsPerProblem = (report.rejectionsPerProblem ?? []).map { ProblemCount(problem: $0.problem, count: $0.count) }
        hasRejectionsPerProblem = !rejectionsPerProblem.isEmpty
        queries = ConsoleReport.Queries.all
            .filter { bundleId == nil || !$0.globalOnly }
            .map { Query(id: $0.id, source: $0.source, sql: $0.runnable(bundleId: bundleId, environment: environment)) }
    }

    /// "3 of 40 (7.5%)"; "0 of 0" without a rate.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "\(part) of 0" }
        return "\(part) of \(whole) (\(percent(Double(part) / Double(whole))))"
    }

    /// Treated minus held-out 30-day retention, in percentage points; words when there is nothing to compare.
    /// The campaign's lift in 30-day retention, per variant of an experiment, each with its 95% interval and verdict.
    static func lift(_ c: ConsoleReport.Campaign, _ lifts: [LiftStatistics]) -> String {
        guard c.liftHeldOut > 0 else { return "not measurable: nobody was held out (holdoutPercent is 0 or too few subscribers)" }
        guard c.treated > 0 else { return "not measurable: nobody was treated" }
        func points(_ fraction: Double) -> String { (fraction > 0 ? "+" : "") + String(format: "%.1f", fraction * 100) }
        let rows = lifts.filter { $0.bundleId == c.bundleId && $0.campaignId == c.campaignId && $0.treated > 0 }
        return rows.map { row in
            var text = row.variantId.isEmpty ? "" : "variant \(row.variantId): "
            text += row.retentionLift.value.map { "\(points($0)) percentage points" } ?? "–"
            if let lower = row.retentionLift.lower, let upper = row.retentionLift.upper {
                text += " (95% interval \(points(lower)) to \(points(upper)))"
            }
            text += ": \(row.verdict)"
            if let needed = row.neededPerGroup { text += "; a lift this large needs about \(needed) subscribers per group" }
            return text + " (groups of \(row.treated) and \(row.heldOut))"
        }.joined(separator: "; ")
    }

    /// "cancel-sheet, variant half: saved 8 of 12, 66.7% (95% interval …); held out (Apple's fallback) 30.0% …; lift …".
    static func saveRate(_ row: SaveRateStatistics) -> String {
        func rate(_ rate: LiftStatistics.Rate, points: Bool = false) -> String {
            guard let value = rate.value else { return "–" }
            func format(_ x: Double) -> String { points ? (x > 0 ? "+" : "") + String(format: "%.1f", x * 100) : percent(x) }
            guard let lower = rate.lower, let upper = rate.upper else { return format(value) }
            return "\(format(value)) (95% interval \(format(lower)) to \(format(upper)))"
        }
        var text = row.campaignId + (row.variantId.isEmpty ? "" : ", variant \(row.variantId)") + " [\(row.bundleId)]: "
        text += "saved \(row.saved) of \(row.saved + row.lost), \(rate(row.saveRate)); held out (Apple's fallback) "
        text += "\(row.heldOutSaved) of \(row.heldOutSaved + row.heldOutLost), \(rate(row.heldOutSaveRate)); "
        text += "lift \(rate(row.lift, points: true)) percentage points; \(row.undecided) undecided"
        return text
    }

    static func percent(_ fraction: Double) -> String {
        String(format: "%.1f%%", fraction * 100)
    }

    static func duration(_ seconds: Double) -> String {
        // An age read from a row: 'infinity' or a date decades off must not trap in Int(_:).
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "∞" }
        switch seconds {
        case ..<120: return "\(Int(seconds.rounded())) s"
        case ..<7200: return "\(Int((seconds / 60).rounded())) min"
        default: return "\(Int((seconds / 3600).rounded())) h"
        }
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateTimeSeparator(.space).time(includingFractionalSeconds: false))
    }
}
