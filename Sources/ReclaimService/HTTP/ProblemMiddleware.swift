import Hummingbird
import Logging
import PostgresNIO

/// Turns every error into problem+json: Hummingbird's own (404, 413, …) keep their status, a
/// lost database becomes 503 (so Apple retries), anything else becomes a logged 500 that names
/// the request id and leaks nothing.
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
        } catch let error as PSQLError {
            context.logger.error("database error", metadata: ["error": "\(String(reflecting: error.code))", "path": "\(request.uri.path)"])
            return try Problem.databaseUnavailable().response(from: request, context: context)
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
