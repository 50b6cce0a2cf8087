import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReclaimDomain
import ReclaimStore

/// The HTTP request of one outbound job: a forward's original body and content type with
/// `X-Reclaim-Notification-UUID`, or a webhook's event signed as Standard Webhooks.
enum OutboundRequest {
    struct Unsendable: Error, CustomStringConvertible {
        let description: String
    }

    /// A forward about a subscriber forgotten on request that this target does not get (`forwardForgotten: false`),
    /// or whose body is no longer whole (redacted before its job carried it): nothing is sent, never an empty or
    /// partial body, and the job is done.
    struct NotForwarded: Error, CustomStringConvertible {
        var description: String { "not forwarded: the notification is about a subscriber forgotten on request" }
    }

    static let userAgent = "Reclaim/\(ReclaimVersion.current)"

    static func make(_ job: OutboundStore.Job, target: OutboundTarget, now: Date = Date()) throws -> HTTPClientRequest {
        var request = HTTPClientRequest(url: target.row.url)
        request.method = .POST
        for header in target.headers { request.headers.add(name: header.name, value: header.value) }
        request.headers.replaceOrAdd(name: "User-Agent", value: userAgent)
        let body: [UInt8]
        if target.isWebhook {
            guard let webhookId = job.webhookId else { throw Unsendable(description: "the webhook job has no webhookId") }
            body = Array(job.payload.utf8)
            // Standard Webhooks: webhook-timestamp is this attempt's time in whole seconds; receivers refuse old ones.
            let timestamp = Int64(now.timeIntervalSince1970)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "webhook-id", value: webhookId)
            request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
            request.headers.add(
                name: "webhook-signature",
                value: WebhookSignature.header(id: webhookId, timestamp: timestamp, body: body, secrets: target.secrets)
            )
        } else {
            guard let uuid = job.notificationUUID, let signedPayload = job.signedPayload else {
                throw Unsendable(description: "the notification is no longer stored")
            }
            if job.forgotten, !target.row.forwardForgotten { throw NotForwarded() }
            guard let forward = OutboundStore.forwardBody(payload: job.payload, signedPayload: signedPayload) else {
                throw Unsendable(description: "the forward job's payload is not readable")
            }
            // Redacted (a forgotten subscriber) and not carried whole by the job: the receiver gets nothing rather
            // than {"signedPayload":""}.
            if signedPayload.isEmpty, !forward.isWhole { throw NotForwarded() }
            body = forward.body
            request.headers.add(name: "Content-Type", value: forward.contentType)
            request.headers.add(name: "X-Reclaim-Notification-UUID", value: uuid.uuidString.lowercased())
        }
        request.headers.add(name: "Content-Length", value: "\(body.count)")
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }
}
