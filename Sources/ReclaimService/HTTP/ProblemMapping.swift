import Hummingbird
import Logging
import NIOHTTP1
import PostgresNIO
import ReclaimDomain
import ReclaimStore

// Every error-to-problem mapping: what the services answer or throw, as the HTTP client sees it. The routes throw
// what the services return (``Problem/init(_:)-IngestRefusal``…) and the middleware maps the rest.

/// Turns every error into problem+json: Hummingbird's own (404, 413, …) keep their status, a
/// lost or late database becomes 503 (so Apple retries; ``PostgresNIO/PSQLError/isOutage``), anything else (a
/// constraint violation included) becomes a logged 500 that names the request id and leaks nothing.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            return try problem.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            let problem = Self.problem(for: error)
            return try problem.response(from: request, context: context)
        } catch let error as PSQLError where error.isOutage {
            context.logger.error(
                "database unavailable",
                metadata: ["error": "\(String(reflecting: error.code))", "sqlState": "\(error.sqlState ?? "-")", "path": "\(request.uri.path)"]
            )
            return try Problem.databaseUnavailable().response(from: request, context: context)
        } catch let error as PSQLError {
            // A defect, not an outage: a 500 that names the request id; the log has the SQLSTATE and constraint.
            context.logger.error(
                "database error",
                metadata: [
                    "error": "\(String(reflecting: error.code))", "sqlState": "\(error.sqlState ?? "-")",
                    "constraint": "\(error.serverInfo?[.constraintName] ?? "-")", "path": "\(request.uri.path)",
                ]
            )
            return try Problem.internalError(requestId: context.id).response(from: request, context: context)
        } catch let error as DatabaseTimeout {
            context.logger.error("database deadline", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return try Problem.databaseUnavailable().response(from: request, context: context)
        } catch is GrantService.LostRace {
            return try Problem.databaseUnavailable().response(from: request, context: context)
        } catch let error as IngestUnavailable {
            return try Problem(error).response(from: request, context: context)
        } catch let error as HTTPParserError {
            // A body the HTTP parser could not read (a malformed chunk size, a connection that ended mid-body): the
            // client's mistake, not this server's, and no reason for an error-level line anybody could provoke.
            context.logger.notice("malformed request body", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return try Problem.badRequest("malformed-request", "the request body could not be read: \(error)").response(
                from: request,
                context: context
            )
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            return try Problem.internalError(requestId: context.id).response(from: request, context: context)
        }
    }

    static func problem(for error: any HTTPResponseError) -> Problem {
        switch error.status {
        case .notFound: return .notFound("no route for this method and path")
        case .contentTooLarge:
            return Problem(.contentTooLarge, "body-too-large", title: "Body too large", detail: "the request body exceeds the limit")
        case .methodNotAllowed:
            return Problem(.methodNotAllowed, "method-not-allowed", title: "Method not allowed", detail: "method not allowed on this path")
        case .badRequest: return .badRequest("bad-request", "the request could not be read")
        case let status: return Problem(status, "http-\(status.code)", title: status.reasonPhrase, detail: status.reasonPhrase)
        }
    }
}

extension Problem {
    /// A notification (or a Retention Messaging request) ingest refused.
    init(_ refusal: IngestRefusal) {
        let (status, title): (HTTPResponse.Status, String) =
            switch refusal.reason {
            case .malformedBody, .malformedJWS: (.badRequest, "Bad request")
            case .unsupportedAlgorithm: (.unauthorized, "Unsupported algorithm")
            case .invalidSignature: (.unauthorized, "Invalid signature")
            case .untrustedCertificateChain: (.unauthorized, "Untrusted certificate chain")
            case .unknownApp: (.forbidden, "Unknown app")
            case .wrongAppAppleId: (.forbidden, "Wrong appAppleId")
            case .environmentNotAccepted: (.unprocessableContent, "Environment not accepted")
            case .inconsistentPayload: (.unprocessableContent, "Inconsistent payload")
            case .invalidNotification: (.unprocessableContent, "Invalid notification")
            }
        self.init(status, refusal.reason.rawValue, title: title, detail: refusal.detail)
    }

    /// A genuine notification not stored now: 503, and Apple retries.
    init(_ unavailable: IngestUnavailable) {
        switch unavailable {
        case .busy:
            self.init(
                .serviceUnavailable,
                "server-busy",
                title: "Service busy",
                detail: "too many notifications are waiting for the database; retry later"
            )
        case .database: self = .databaseUnavailable()
        }
    }
}

extension Problem {
    /// A grant's Idempotency-Key that named a different grant before.
    static let idempotencyKeyReused = Problem(
        .unprocessableContent,
        "idempotency-key-reused",
        title: "Idempotency key reused",
        detail: "this Idempotency-Key was used for a different grant; use a new key for a new grant"
    )

    /// A grant for an app that has no signing key.
    static func appWithoutSigningKey(_ bundleId: String) -> Problem {
        Problem(.unprocessableContent, "unknown-app", title: "Unknown app", detail: "app \(bundleId) is not configured with a signing key")
    }
}
