import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// `POST /v1/apple/notifications` minus HTTP: verify Apple's signature chain and the app's
/// identity, then store the notification and its processing job durably (group commit) before
/// the caller may answer 200. Every refusal is a `Problem`, counted and recorded for forensics.
///
/// Ingest checks the outer signature, which covers the nested JWS byte for byte; the worker
/// verifies the nested transaction and renewal info in full before acting on them.
public struct NotificationIngest: Sendable {
    public enum Outcome: String, Sendable {
        /// Newly committed, with its processing job.
        case stored
        /// Already stored (Apple retries with the same notificationUUID).
        case duplicate
    }

    let verifier: AppleJWSVerifier
    let apps: [AppIdentity]
    let batcher: CommitBatcher<NotificationRecord, Bool>
    let rejections: RejectionRecorder
    let logger: Logger
    let storedCounter = Counter(label: "reclaim_notifications_total", dimensions: [("outcome", "stored")])
    let duplicateCounter = Counter(label: "reclaim_notifications_total", dimensions: [("outcome", "duplicate")])
    /// Signature and chain checks of the signedPayload that verified (refusals are counted by problem).
    let verificationTimer = Metrics.Timer(label: "reclaim_notification_verification_seconds")

    public init(dependencies: Dependencies) {
        self.verifier = dependencies.verifier
        self.apps = dependencies.config.appIdentities
        self.rejections = RejectionRecorder(
            store: RejectedInputStore(postgres: dependencies.postgres, keep: dependencies.config.server.rejectedInputsKept),
            logger: dependencies.logger
        )
        self.logger = dependencies.logger
        self.batcher = CommitBatcher(
            postgres: dependencies.postgres,
            maxWaiting: dependencies.config.server.maxPendingNotifications,
            liveness: dependencies.liveness,
            logger: dependencies.logger
        ) { [maxAttempts = dependencies.config.worker.maxAttempts] records, connection, logger in
            let inserted = try await NotificationStore.insert(records, maxAttempts: maxAttempts, connection: connection, logger: logger)
            // A UUID twice in one batch: only its first occurrence counts as stored.
            var seen = Set<UUID>()
            return records.map { inserted.contains($0.notificationUUID) && seen.insert($0.notificationUUID).inserted }
        }
    }

    /// Verifies and stores one request body. Throws a `Problem` for anything refused.
    /// - Parameter requestLogger: the request's logger (its lines carry the request id); default the service's.
    public func ingest(body: ByteBuffer, requestLogger: Logger? = nil) async throws -> Outcome {
        let logger = requestLogger ?? self.logger
        let record: NotificationRecord
        do {
            record = try await verify(body)
        } catch let problem as Problem {
            reject(problem, body: body, logger: logger)
            throw problem
        }
        let stored: Bool
        do {
            stored = try await batcher.submit(record)
        } catch is CommitQueueFull {
            // Nothing was acknowledged; Apple retries. Counted, not recorded: the notification is genuine.
            Counter(label: "reclaim_notifications_rejected_total", dimensions: [("problem", "server-busy")]).increment()
            throw Problem(
                .serviceUnavailable,
                "server-busy",
                title: "Service busy",
                detail: "too many notifications are waiting for the database; retry later"
            )
        } catch {
            logger.error(
                "storing a notification failed",
                metadata: ["notificationUUID": "\(record.notificationUUID)", "error": "\(String(reflecting: error))"]
            )
            throw Problem.databaseUnavailable()
        }
        (stored ? storedCounter : duplicateCounter).increment()
        return stored ? .stored : .duplicate
    }

    /// The checks, in order: JSON body, JWS and chain, app identity, required fields.
    func verify(_ body: ByteBuffer) async throws -> NotificationRecord {
        guard let envelope = SignedPayloadBody.decode(body.readableBytesView) else {
            throw Problem.badRequest("malformed-body", "the body must be JSON of the form {\"signedPayload\": \"<JWS>\"}")
        }
        let notification: VerifiedNotification
        let started = ContinuousClock.now
        do {
            notification = try await verifier.verifyNotificationEnvelope(envelope.signedPayload)
            verificationTimer.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        } catch {
            throw Self.problem(for: error)
        }
        do {
            try checkIdentity(of: notification, apps: apps)
        } catch {
            throw Self.problem(for: error)
        }
        let payload = notification.payload
        guard let uuid = UUID(uuidString: payload.notificationUUID) else {
            throw Problem(.unprocessableContent, "invalid-notification", title: "Invalid notification", detail: "notificationUUID is not a UUID")
        }
        guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue else {
            throw Problem(
                .unprocessableContent,
                "invalid-notification",
                title: "Invalid notification",
                detail: "the notification names no bundleId or environment"
            )
        }
        let transaction = notification.transaction
        return NotificationRecord(
            notificationUUID: uuid,
            notificationType: payload.notificationType.rawValue,
            subtype: payload.subtype?.rawValue,
            bundleId: bundleId,
            environment: environment,
            signedDateMillis: payload.signedDate ?? Int64(Date().timeIntervalSince1970 * 1000),
            originalTransactionId: notification.originalTransactionId,
            transactionId: transaction?.transactionId,
            appAccountToken: notification.appAccountToken,
            productId: transaction?.productId,
            signedPayload: envelope.signedPayload
        )
    }

    static func problem(for error: JWSVerificationError) -> Problem {
        switch error.code {
        case .malformed:
            return .badRequest("malformed-jws", error.reason)
        case .unsupportedAlgorithm:
            return Problem(.unauthorized, "unsupported-algorithm", title: "Unsupported algorithm", detail: error.reason)
        case .invalidSignature:
            return Problem(.unauthorized, "invalid-signature", title: "Invalid signature", detail: error.reason)
        case .invalidCertificate, .invalidChain, .missingAppleExtension, .chainExpired:
            return Problem(.unauthorized, "untrusted-certificate-chain", title: "Untrusted certificate chain", detail: error.reason)
        }
    }

    static func problem(for error: AppIdentityError) -> Problem {
        switch error.code {
        case .unknownApp:
            return Problem(.forbidden, "unknown-app", title: "Unknown app", detail: error.reason)
        case .wrongAppAppleId:
            return Problem(.forbidden, "wrong-app-apple-id", title: "Wrong appAppleId", detail: error.reason)
        case .environmentNotAccepted:
            return Problem(.unprocessableContent, "environment-not-accepted", title: "Environment not accepted", detail: error.reason)
        case .inconsistentPayload:
            return Problem(.unprocessableContent, "inconsistent-payload", title: "Inconsistent payload", detail: error.reason)
        }
    }

    /// Counts, logs and records a refusal. The record is written in the background (``RejectionRecorder``): the
    /// caller is answered without waiting for the database.
    func reject(_ problem: Problem, body: ByteBuffer, logger: Logger) {
        Counter(label: "reclaim_notifications_rejected_total", dimensions: [("problem", problem.slug)]).increment()
        logger.notice("notification refused", metadata: ["problem": "\(problem.slug)", "detail": "\(problem.detail)"])
        rejections.record(.init(endpoint: "/v1/apple/notifications", problem: problem.slug, reason: problem.detail, body: body))
    }
}
