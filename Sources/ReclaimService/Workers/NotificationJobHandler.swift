import Foundation
import Logging
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Processes a stored notification: verifies and decodes it again (the chain cache makes that one
/// ECDSA verification per JWS) and hands it to the campaign engine, in the job's transaction.
struct NotificationJobHandler: JobHandler {
    let verifier: AppleJWSVerifier
    let engine: CampaignEngine

    struct MissingNotification: Error, CustomStringConvertible {
        let description: String
    }

    func handle(_ job: Job, connection: PostgresConnection, logger: Logger) async throws {
        guard let uuid = job.notificationUUID,
            let signedPayload = try await NotificationStore.signedPayload(of: uuid, connection: connection, logger: logger)
        else {
            throw MissingNotification(description: "job \(job.id) names no stored notification")
        }
        let notification = try await verifier.verifyNotification(signedPayload)
        if let snapshot = SubscriptionSnapshot(notification, notificationUUID: uuid) {
            try await engine.process(snapshot, connection: connection, logger: logger)
        }
    }
}
