import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Data-subject requests over HTTP (docs/privacy.md): `GET /v1/subscribers/story` (admin, support and privacy keys)
/// answers what `reclaim subscribers show --json` prints, and `POST /v1/subscribers/erasure` (admin and privacy keys)
/// what `reclaim subscribers forget --json` does, idempotent by `Idempotency-Key` (`"dryRun": true`: the preview,
/// which needs none). A key of one app reads and erases that app's subscribers only. Each is in the audit log.
struct SubscriberRoutes {
    let postgres: Database

    static let maxBodyBytes = 4 * 1024
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// Registers on a group behind ``KeyAuthenticator`` `.people`.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        router.get("/v1/subscribers/story") { request, context -> Response in
            let caller = try context.person()
            let parameters = request.uri.queryParameters
            let lookup = try Self.lookup(
                originalTransactionId: parameters["originalTransactionId"].map(String.init),
                appAccountToken: parameters["appAccountToken"].map(String.init),
                app: parameters["app"].map(String.init),
                environment: parameters["environment"].map(String.init),
                caller: caller
            )
            let story = try await postgres.withConnection(logger: context.logger) {
                try await SubscriberStore.story(lookup, connection: $0, logger: context.logger)
            }
            await audit("subscriber.read", lookup: lookup, outcome: "ok", detail: "over HTTP", caller: caller, context: context)
            return Self.json(try ReportJSON.render(story))
        }
        router.post("/v1/subscribers/erasure") { request, context -> Response in
            let caller = try context.person()
            guard caller.scope == .admin || caller.scope == .privacy else {
                await audit(
                    "subscriber.forget",
                    lookup: nil,
                    outcome: "refused",
                    detail: "a \(caller.scope.rawValue) key",
                    caller: caller,
                    context: context
                )
                throw Problem(.forbidden, "a \(caller.scope.rawValue) key reads stories; erasing takes a privacy or admin key")
            }
            let body = try await readJSONBody(request, context: context, limit: Self.maxBodyBytes, record: { _ in })
            let asked = try Self.erasureBody(Data(body.readableBytesView))
            let lookup = try Self.lookup(
                originalTransactionId: asked.originalTransactionId,
                appAccountToken: asked.appAccountToken,
                app: asked.app,
                environment: nil,
                caller: caller
            )
            if asked.dryRun {
                let outcome = try await SubscriberErasure.forget(lookup, dryRun: true, postgres: postgres, logger: context.logger)
                await audit("subscriber.forget-preview", lookup: lookup, outcome: "dry-run", detail: "over HTTP", caller: caller, context: context)
                return Self.json(try ReportJSON.render(outcome))
            }
            guard let key = request.headers[Self.idempotencyKey], GrantRequest.isValidIdempotencyKey(key) else {
                throw Problem(
                    .missingIdempotencyKey,
                    "send an Idempotency-Key header (1 to 200 visible ASCII characters): an erasure is done once per key"
                )
            }
            let (answer, repeated) = try await erase(lookup, key: key, caller: caller, logger: context.logger)
            await audit(
                "subscriber.forget",
                lookup: lookup,
                outcome: "ok",
                detail: repeated ? "over HTTP, the same Idempotency-Key again" : "over HTTP",
                caller: caller,
                context: context
            )
            return Self.json(answer)
        }
    }

    /// Erases once per key and Idempotency-Key: the first answer (without `matched`: no identifier is kept) for the
    /// same request again, 422 for another request under the same key.
    private func erase(_ lookup: SubscriberLookup, key: String, caller: APIKeyStore.Caller, logger: Logger) async throws -> (String, Bool) {
        try await postgres.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(caller.keyId.uuidString + key), 77))", logger: logger)
            let request = "erasure\u{0}\(lookup.auditIdentifier)\u{0}\(lookup.bundleId ?? "")"
            let hmac = try await AuditLog.keyedHash(request, connection: connection, logger: logger)
            if let earlier = try await ErasureRequestStore.earlier(
                apiKeyId: caller.keyId,
                idempotencyKey: key,
                connection: connection,
                logger: logger
            ) {
                guard earlier.hmac == hmac else {
                    throw Problem(.idempotencyKeyReused, "this Idempotency-Key was used for a different erasure; use a new key for a new request")
                }
                var outcome = try JSONDecoder().decode(SubscriberErasure.Outcome.self, from: Data(earlier.answer.utf8))
                outcome.matched = []
                return (try ReportJSON.render(outcome), true)
            }
            let outcome = try await SubscriberErasure.forget(lookup, connection: connection, logger: logger)
            var kept = outcome
            kept.matched = []
            try await ErasureRequestStore.insert(
                apiKeyId: caller.keyId,
                idempotencyKey: key,
                hmac: hmac,
                answer: try ReportJSON.render(kept),
                connection: connection,
                logger: logger
            )
            return (try ReportJSON.render(outcome), false)
        }
    }

    /// Whom a request names: one identifier, and the app (a key of one app: its own, whatever is asked).
    static func lookup(
        originalTransactionId: String?,
        appAccountToken: String?,
        app: String?,
        environment: String?,
        caller: APIKeyStore.Caller
    ) throws -> SubscriberLookup {
        let identifier: SubscriberLookup.Identifier
        switch (originalTransactionId, appAccountToken) {
        case (let id?, nil):
            guard SubscriberLookup.Identifier.isTransactionId(id) else {
                throw Problem(.invalidParameter, "originalTransactionId must be 1 to 64 digits")
            }
            identifier = .originalTransactionId(id)
        case (nil, let token?):
            guard let uuid = UUID(uuidString: token) else { throw Problem(.invalidParameter, "appAccountToken must be a UUID") }
            identifier = .appAccountToken(uuid)
        case (nil, nil): throw Problem(.missingParameter, "name the subscriber: originalTransactionId or appAccountToken")
        case (_?, _?): throw Problem(.invalidParameter, "name the subscriber by one identifier: originalTransactionId or appAccountToken, not both")
        }
        if let environment, !["Production", "Sandbox", "Xcode", "LocalTesting"].contains(environment) {
            throw Problem(.invalidParameter, "environment must be Production, Sandbox, Xcode or LocalTesting")
        }
        let asked = app.flatMap { $0.isEmpty ? nil : $0 }
        if caller.scope != .admin, let own = caller.bundleId {
            if let asked, asked != own { throw Problem(.forbidden, "this key is of \(own): it reads and erases that app's subscribers only") }
            return SubscriberLookup(identifier, bundleId: own, environment: environment)
        }
        return SubscriberLookup(identifier, bundleId: asked, environment: environment)
    }

    struct ErasureBody: Decodable {
        var originalTransactionId: String?
        var appAccountToken: String?
        var app: String?
        var dryRun: Bool?
    }

    /// The erasure's body: `originalTransactionId` or `appAccountToken`, optionally `app` and `dryRun`; nothing else.
    static func erasureBody(_ data: Data) throws -> (originalTransactionId: String?, appAccountToken: String?, app: String?, dryRun: Bool) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Problem(.invalidBody, "the body must be a JSON object")
        }
        let known: Set = ["originalTransactionId", "appAccountToken", "app", "dryRun"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw Problem(.invalidBody, "unknown field \(unknown): the body takes originalTransactionId or appAccountToken, app and dryRun")
        }
        do {
            let body = try JSONDecoder().decode(ErasureBody.self, from: data)
            return (body.originalTransactionId, body.appAccountToken, body.app, body.dryRun ?? false)
        } catch let DecodingError.typeMismatch(type, context) {
            let field = context.codingPath.first?.stringValue ?? "a field"
            throw Problem(.invalidBody, "\(field) must be \(type == Bool.self ? "true or false" : "a string")")
        } catch {
            throw Problem(.invalidBody, "the body must be a JSON object of originalTransactionId or appAccountToken, app and dryRun")
        }
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func audit(
        _ action: String,
        lookup: SubscriberLookup?,
        outcome: String,
        detail: String,
        caller: APIKeyStore.Caller,
        context: ReclaimRequestContext
    ) async {
        do {
            try await Audit.record(
                action,
                target: lookup.map { .subscriber($0.auditIdentifier) },
                outcome: outcome,
                detail: detail,
                actor: Audit.keyActor(caller),
                database: postgres,
                logger: context.logger
            )
        } catch {
            context.logger.error("the audit log did not take a data-subject request", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
