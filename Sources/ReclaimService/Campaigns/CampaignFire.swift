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

    public init(campaignId: String, subscriber: SubscriberKey, triggeredAt: Date, notificationUUID: UUID) {
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

    func payload() throws -> String { String(decoding: try JSONEncoder().encode(self), as: UTF8.self) }
}

/// Runs ``CampaignFire`` jobs.
struct CampaignFireJobHandler: JobHandler {
    let engine: CampaignEngine

    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        let fire = try JSONDecoder().decode(CampaignFire.self, from: Data(job.payload.utf8))
        try await engine.fire(fire, connection: connection, logger: logger)
    }
}
