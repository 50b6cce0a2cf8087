import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ReclaimDomain
import ReclaimStore

/// `reclaim webhooks`: a signed test message, the targets' state, pause and resume.
public enum WebhookTasks {
    /// What `reclaim webhooks test` sent and got back.
    public struct TestResult: Sendable {
        public var status: Int
        public var milliseconds: Double
        public var webhookId: String
        public var signatures: Int
        public var body: String
    }

    /// POSTs a signed `webhook.test` message to `url`: with the secrets of the config's webhook at that URL, or
    /// the secret in `secretFile`.
    public static func sendTest(url: String, config: ReclaimConfig?, secretFile: String?, logger: Logger) async throws -> TestResult {
        var secrets: [WebhookSecret] = []
        var bundleId = "com.example.app"
        if let secretFile {
            guard let text = FileManager.default.contents(atPath: secretFile) else { throw ConfigError("cannot read \(secretFile)") }
            do {
                secrets = [try WebhookSecret(text: String(decoding: text, as: UTF8.self))]
            } catch {
                throw ConfigError("\(secretFile): \(error)")
            }
        } else if let config, let target = try config.outboundTargets().first(where: { $0.isWebhook && $0.row.url == url }) {
            secrets = target.secrets
            bundleId = target.row.bundleId
        } else {
            throw ConfigError("\(OutboundURL.redacted(url)) is not a webhook of the config: give --secret-file")
        }
        if let problem = OutboundURL.problem(url, allowPrivate: true) { throw ConfigError(problem) }
        let event: [String: Any] = [
            "type": WebhookEvent.testType,
            "timestamp": ISO8601DateFormatter().string(from: Date()),
            "data": ["bundleId": bundleId, "message": "a test from reclaim webhooks test"],
        ]
        let payload = String(decoding: try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]), as: UTF8.self)
        let webhookId = "msg_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let target = OutboundTarget(
            row: .init(kind: OutboundStore.webhookJobKind, bundleId: bundleId, url: url, environments: [], events: []),
            timeout: .seconds(10),
            headers: [],
            secrets: secrets
        )
        let job = OutboundStore.Job(id: 0, kind: OutboundStore.webhookJobKind, attempt: 1, createdAt: Date(), payload: payload, webhookId: webhookId)
        let request = try OutboundRequest.make(job, target: target)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        let started = ContinuousClock.now
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .seconds(10))
        } catch {
            try? await http.shutdown()
            throw ConfigError("\(OutboundURL.redacted(url)): \(OutboundSender.describe(error))")
        }
        let answer = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
        let elapsed = ContinuousClock.now - started
        try? await http.shutdown()
        return TestResult(
            status: Int(response.status.code),
            milliseconds: Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15,
            webhookId: webhookId,
            signatures: secrets.count,
            body: answer
        )
    }

    /// One line per target: kind, app, URL (without query), paused, queued, retrying, dead, oldest, last error.
    public static func list(url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) { try await OutboundStore.status(connection: $0, logger: logger) }.map { target in
                let paused = target.pausedAt.map { "paused since \(ISO8601DateFormatter().string(from: $0))" } ?? "sending"
                let error = (target.lastError ?? "").replacingOccurrences(of: "\n", with: " ")
                return [
                    target.kind, target.bundleId, OutboundURL.redacted(target.url), paused, "queued=\(target.queued)",
                    "retrying=\(target.retrying)", "dead=\(target.dead)", "oldest=\(Int(target.oldestAgeSeconds))s", error,
                ].joined(separator: "\t")
            }
        }
    }

    /// Pauses or resumes the targets at `targetURL`; returns their ids (URLs redacted).
    public static func setPaused(_ paused: Bool, targetURL: String, bundleId: String?, url: DatabaseURL, logger: Logger) async throws -> [String] {
        try await Database.withDatabase(url, maxConnections: 1, logger: logger) { client in
            try await client.withConnection(logger: logger) {
                try await OutboundStore.setPaused(paused, url: targetURL, bundleId: bundleId, connection: $0, logger: logger)
            }
            .map(OutboundURL.redactedTargetId)
        }
    }
}
