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
            let problem = Self.problem(for: error, context: context, path: request.uri.path)
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
        } catch let error as DatabaseConnectionLost {
            context.logger.error("database connection lost", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return try Problem.databaseUnavailable().response(from: request, context: context)
        } catch is GrantService.LostRace {
            return try Problem.databaseUnavailable().response(from: request, context: context)
        } catch let error as IngestUnavailable {
            return try Problem(error).response(from: request, context: context)
        } catch let error as HTTPParserError {
            // A body the HTTP parser could not read (a malformed chunk size, a connection that ended mid-body): the
            // client's mistake, not this server's, and no reason for an error-level line anybody could provoke.
            context.logger.notice("malformed request body", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return try Problem(.malformedRequest, "the request body could not be read: \(error)").response(
                from: request,
                context: context
            )
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))", "path": "\(request.uri.path)"])
            return try Problem.internalError(requestId: context.id).response(from: request, context: context)
        }
    }

    /// Hummingbird's own errors (and NIO's 413). Only these statuses are thrown by the framework today; any other is
    /// answered with the catalog's nearest type (a client error as `bad-request`, anything else as a logged 500), so
    /// that no answer carries a type the catalog does not define.
    static func problem(for error: any HTTPResponseError, context: Context, path: String) -> Problem {
        switch error.status {
        case .notFound: return Problem(.notFound, "no route for this method and path")
        case .contentTooLarge: return Problem(.bodyTooLarge, "the request body exceeds the limit")
        case .methodNotAllowed: return Problem(.methodNotAllowed, "method not allowed on this path")
        case .badRequest: return Problem(.badRequest, "the request could not be read")
        case let status where status.kind == .clientError:
            context.logger.notice("unmapped client error", metadata: ["status": "\(status.code)", "path": "\(path)"])
            return Problem(.badRequest, "the request could not be served (\(status.code) \(status.reasonPhrase))")
        case let status:
            context.logger.error("unmapped error status", metadata: ["status": "\(status.code)", "path": "\(path)"])
            return .internalError(requestId: context.id)
        }
    }
}

extension Problem {
    static func databaseUnavailable() -> Problem {
        Problem(.databaseUnavailable, "the database is not reachable; retry later")
    }

    static func internalError(requestId: String) -> Problem {
        Problem(.internalError, "an unexpected error occurred (request \(requestId)); it has been logged")
    }

    /// A notification (or a Retention Messaging request) ingest refused.
    init(_ refusal: IngestRefusal) {
        self.init(refusal.reason.problemType, refusal.detail)
    }

    /// A genuine notification not stored now: 503, and Apple retries.
    init(_ unavailable: IngestUnavailable) {
        switch unavailable {
        case .busy: self.init(.serverBusy, "too many notifications are waiting for the database; retry later")
        case .database: self = .databaseUnavailable()
        }
    }

    /// A transaction that proves no subscription of the caller's app (`POST /v1/offers/lookup`).
    init(_ refused: TransactionProof.Refused) {
        self.init(refused.malformed ? .invalidText : .invalidTransaction, refused.reason)
    }

    /// A grant's Idempotency-Key that named a different grant before.
    static let idempotencyKeyReused = Problem(
        .idempotencyKeyReused,
        "this Idempotency-Key was used for a different grant; use a new key for a new grant"
    )

    /// A grant for an app that has no signing key.
    static func appWithoutSigningKey(_ bundleId: String) -> Problem {
        Problem(.appWithoutSigningKey, "app \(bundleId) is not configured with a signing key")
    }
}

extension IngestRefusal.Reason {
    /// The problem type a refusal is answered, counted and recorded as.
    var problemType: ProblemType {
        switch self {
        case .malformedBody: .malformedBody
        case .malformedJWS: .malformedJWS
        case .unsupportedAlgorithm: .unsupportedAlgorithm
        case .invalidSignature: .invalidSignature
        case .untrustedCertificateChain: .untrustedCertificateChain
        case .unknownApp: .unknownApp
        case .wrongAppAppleId: .wrongAppAppleId
        case .environmentNotAccepted: .environmentNotAccepted
        case .inconsistentPayload: .inconsistentPayload
        case .invalidNotification: .invalidNotification
        }
    }
}
