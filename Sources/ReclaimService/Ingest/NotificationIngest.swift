import Foundation
import Logging
import Metrics
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Ingest of one signed notification, from `POST /v1/apple/notifications` or Apple's notification history
/// (reconcile): verify Apple's signature chain and the app's identity, then store the notification and its
/// processing job durably (group commit) before the caller may acknowledge it. Answers an ``IngestResult``;
/// every refusal is counted and recorded for forensics. Knows nothing of HTTP.
///
/// Ingest checks the outer signature, which covers the nested JWS byte for byte; the worker
/// verifies the nested transaction and renewal info in full before acting on them.
public struct NotificationIngest: Sendable {
    let verifier: AppleJWSVerifier
    let apps: [AppIdentity]
    let batcher: CommitBatcher<NotificationRecord, Bool>
    let rejections: RejectionRecorder
    /// Apps with forwarding targets: their notifications keep the body's shape so it can be sent on as received.
    let forwardingApps: Set<String>
    /// Apps with a webhook for `notification.refused`: only then is a refused payload read for the app it names
    /// (a flood of forged requests must not cost a JSON parse each for nobody).
    let refusalWebhookApps: Set<String>
    let logger: Logger
    let storedCounter = Counter(label: "reclaim_notifications_total", dimensions: [("outcome", "stored")])
    let duplicateCounter = Counter(label: "reclaim_notifications_total", dimensions: [("outcome", "duplicate")])
    /// Signature and chain checks of the signedPayload that verified (refusals are counted by problem).
    let verificationTimer = Metrics.Timer(label: "reclaim_notification_verification_seconds")

    /// - Parameters:
    ///   - batcher: writes the verified notifications and their jobs, answering whether each was new.
    ///   - rejections: records refused requests in the background.
    ///   Both are built in `Wiring/` (``init(dependencies:)``): what ingest writes to is not its choice.
    init(
        verifier: AppleJWSVerifier,
        apps: [AppIdentity],
        batcher: CommitBatcher<NotificationRecord, Bool>,
        rejections: RejectionRecorder,
        forwardingApps: Set<String>,
        refusalWebhookApps: Set<String>,
        logger: Logger
    ) {
        self.verifier = verifier
        self.apps = apps
        self.batcher = batcher
        self.rejections = rejections
        self.forwardingApps = forwardingApps
        self.refusalWebhookApps = refusalWebhookApps
        self.logger = logger
    }

    /// Verifies and stores one request body, `{"signedPayload": "<JWS>"}`.
    /// - Parameter requestLogger: the request's logger (its lines carry the request id); default the service's.
    /// - Throws: ``IngestUnavailable`` when a genuine notification could not be stored now.
    /// - Parameter contentType: the request's `Content-Type`, forwarded with the body.
    public func ingest(body: ByteBuffer, contentType: String? = nil, requestLogger: Logger? = nil) async throws(IngestUnavailable) -> IngestResult {
        guard let envelope = SignedPayloadBody.decode(body.readableBytesView) else {
            return refuse(
                IngestRefusal(.malformedBody, "the body must be JSON of the form {\"signedPayload\": \"<JWS>\"}"),
                body: body,
                logger: requestLogger ?? logger
            )
        }
        return try await ingest(signedPayload: envelope.signedPayload, body: body, contentType: contentType, logger: requestLogger ?? logger)
    }

    /// Verifies and stores one signed payload, as Apple's notification history returns it.
    public func ingest(signedPayload: String, logger: Logger? = nil) async throws(IngestUnavailable) -> IngestResult {
        try await ingest(signedPayload: signedPayload, body: nil, contentType: nil, logger: logger ?? self.logger)
    }

    /// - Parameter body: the request's body, recorded with a refusal (nil: the history's signed payload is).
    private func ingest(
        signedPayload: String,
        body: ByteBuffer?,
        contentType: String?,
        logger: Logger
    ) async throws(IngestUnavailable)
        -> IngestResult
    {
        var record: NotificationRecord
        do {
            record = try await verify(signedPayload)
        } catch {
            return refuse(error, body: body ?? ByteBuffer(string: signedPayload), claimedApp: claimedApp(signedPayload), logger: logger)
        }
        if forwardingApps.contains(record.bundleId) {
            record.received =
                body.map { ReceivedBody(body: $0.readableBytesView, signedPayload: signedPayload, contentType: contentType) } ?? .history
        }
        let stored: Bool
        do {
            stored = try await batcher.submit(record)
        } catch is CommitQueueFull {
            // Nothing was acknowledged; Apple retries. Counted, not recorded: the notification is genuine.
            Counter(label: "reclaim_notifications_rejected_total", dimensions: [("problem", ProblemType.serverBusy.slug)]).increment()
            throw .busy
        } catch {
            logger.error(
                "storing a notification failed",
                metadata: ["notificationUUID": "\(record.notificationUUID)", "error": "\(String(reflecting: error))"]
            )
            throw .database
        }
        (stored ? storedCounter : duplicateCounter).increment()
        return stored ? .stored : .duplicate
    }

    /// The checks, in order: JWS and chain, app identity, required fields.
    func verify(_ signedPayload: String) async throws(IngestRefusal) -> NotificationRecord {
        let notification: VerifiedNotification
        let started = ContinuousClock.now
        do {
            notification = try await verifier.verifyNotificationEnvelope(signedPayload)
            verificationTimer.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        } catch {
            throw IngestRefusal(error)
        }
        do {
            try checkIdentity(of: notification, apps: apps)
        } catch {
            throw IngestRefusal(error)
        }
        let payload = notification.payload
        guard let uuid = UUID(uuidString: payload.notificationUUID) else {
            throw IngestRefusal(.invalidNotification, "notificationUUID is not a UUID")
        }
        guard let bundleId = payload.bundleId, let environment = payload.environment?.rawValue else {
            throw IngestRefusal(.invalidNotification, "the notification names no bundleId or environment")
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
            signedPayload: signedPayload
        )
    }

    private func refuse(_ refusal: IngestRefusal, body: ByteBuffer, claimedApp: String? = nil, logger: Logger) -> IngestResult {
        recordRefusal(refusal.reason.problemType, detail: refusal.detail, body: body, claimedApp: claimedApp, logger: logger)
        return .refused(refusal)
    }

    /// The app a refused payload names, unverified: read only so that the app's `notification.refused` webhook
    /// hears of it. Any other name is dropped (nobody to tell, and nothing to store).
    func claimedApp(_ signedPayload: String) -> String? {
        guard !refusalWebhookApps.isEmpty else { return nil }
        let segments = signedPayload.utf8.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
        guard segments.count == 3, segments[1].count <= 256 * 1024, let json = Base64URL.decode(Substring(segments[1])),
            let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any]
        else { return nil }
        let data = (object["data"] as? [String: Any]) ?? (object["summary"] as? [String: Any])
        guard let bundle = data?["bundleId"] as? String else { return nil }
        return refusalWebhookApps.contains(bundle) ? bundle : nil
    }

    /// Counts, logs and records a refusal: ingest's own, or the HTTP edge's before the body was read (too large,
    /// not JSON), under the slug of its problem type. The record is written in the background (``RejectionRecorder``):
    /// the caller is answered without waiting for the database.
    public func recordRefusal(_ type: ProblemType, detail: String, body: ByteBuffer, claimedApp: String? = nil, logger: Logger) {
        let slug = type.slug
        // Bounded like every reason Reclaim logs: it may quote the input.
        let reason = LogText.bounded(detail, limit: LogText.reasonLimit)
        Counter(label: "reclaim_notifications_rejected_total", dimensions: [("problem", slug)]).increment()
        logger.notice("notification refused", metadata: ["problem": "\(slug)", "detail": "\(reason)"])
        rejections.record(.init(endpoint: "/v1/apple/notifications", problem: slug, reason: reason, body: body, claimedBundleId: claimedApp))
    }
}
