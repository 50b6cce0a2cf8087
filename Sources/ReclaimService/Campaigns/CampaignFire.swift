import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// A delayed campaign's pending fire: the job `campaign-fire`, due `delay` after the trigger, enqueued in the
/// transaction that processed the triggering notification.
public struct CampaignFire: Codable, Sendable, Equatable {
    public static let jobKind = "campaign-fire"

    public var campaignId: String
    public var bundleId: String
    public var environment: String
    public var originalTransactionId: String
    /// The trigger's signedDate, UNIX milliseconds.
    public var triggeredAtMillis: Int64
    public var notificationUUID: UUID
    /// A campaign deferred to a commitment's end: that end, UNIX milliseconds (nil for a campaign's own `delay`).
    public var commitmentEndsAtMillis: Int64?
    /// A campaign deferred to `conditions.expiresWithin` before the period's end: that end, UNIX milliseconds.
    public var periodEndsAtMillis: Int64?

    public init(
        campaignId: String,
        subscriber: SubscriberKey,
        triggeredAt: Date,
        notificationUUID: UUID,
        commitmentEndsAt: Date? = nil,
        periodEndsAt: Date? = nil
    ) {
        self.commitmentEndsAtMillis = commitmentEndsAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
        self.periodEndsAtMillis = periodEndsAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
        self.campaignId = campaignId
        self.bundleId = subscriber.bundleId
        self.environment = subscriber.environment
        self.originalTransactionId = subscriber.originalTransactionId
        self.triggeredAtMillis = Int64((triggeredAt.timeIntervalSince1970 * 1000).rounded())
        self.notificationUUID = notificationUUID
    }

    public var subscriber: SubscriberKey {
        SubscriberKey(bundleId: bundleId, environment: environment, originalTransactionId: originalTransactionId)
    }

    public var triggeredAt: Date { Date(timeIntervalSince1970: Double(triggeredAtMillis) / 1000) }

    public var commitmentEndsAt: Date? { commitmentEndsAtMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } }

    public var periodEndsAt: Date? { periodEndsAtMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) } }

    func payload() throws -> String { String(decoding: try JSONEncoder().encode(self), as: UTF8.self) }
}

/// Runs ``CampaignFire`` jobs.
struct CampaignFireJobHandler: JobHandler {
    let engine: CampaignEngine

    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        let fire = try JSONDecoder().decode(CampaignFire.self, from: Data(job.payload.utf8))
        try await engine.fire(fire, connection: connection, logger: logger)
    }

    /// A batch's fires by their campaigns' priority, highest first, as one notification's campaigns are decided:
    /// campaigns deferred to the same commitment end fire together, and the higher one should not supersede the lower.
    func handle(batch jobs: [Job], connection: PostgresConnection, logger: Logger) async throws {
        let priorities = Dictionary(engine.campaigns.map { ($0.id, $0.priority) }, uniquingKeysWith: { first, _ in first })
        let fires = try jobs.map { try JSONDecoder().decode(CampaignFire.self, from: Data($0.payload.utf8)) }
        for fire in fires.sorted(by: { priorities[$0.campaignId, default: 0] > priorities[$1.campaignId, default: 0] }) {
            try await engine.fire(fire, connection: connection, logger: logger)
        }
    }
}
