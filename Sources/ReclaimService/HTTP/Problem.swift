import Foundation
import Hummingbird
import ReclaimDomain

/// An RFC 9457 problem (`application/problem+json`): the one error type every route throws.
///
/// `type` is stable (`urn:reclaim:problem:<slug>`) so clients and tests can rely on it;
/// `detail` says in words what was wrong. Never put database text or key material in `detail`; it is cut to
/// ``detailLimit`` characters with control characters escaped, since it may quote what a client sent.
public struct Problem: HTTPResponseError, Equatable {
    public let status: HTTPResponse.Status
    /// Short stable slug, e.g. `invalid-signature`.
    public let slug: String
    public let title: String
    public let detail: String
    /// Seconds a client should wait before retrying (`Retry-After`); 503s default to 5.
    public let retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ slug: String, title: String, detail: String, retryAfter: Int? = nil) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = LogText.bounded(detail, limit: Self.detailLimit)
        self.retryAfter = retryAfter ?? (status == .serviceUnavailable ? 5 : nil)
    }

    /// The longest `detail`: room for a sentence and a bounded quote of the input (``LogText/echoLimit``).
    public static let detailLimit = 300

    public var type: String { "urn:reclaim:problem:\(slug)" }

    struct Body: Encodable {
        let type: String
        let title: String
        let status: Int
        let detail: String
        let instance: String?
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(type: type, title: title, status: status.code, detail: detail, instance: request.uri.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="reclaim""# }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body))))
    }
}

extension Problem {
    public static func badRequest(_ slug: String, _ detail: String) -> Problem {
        Problem(.badRequest, slug, title: "Bad request", detail: detail)
    }
    public static func unauthorized(_ detail: String) -> Problem {
        Problem(.unauthorized, "unauthorized", title: "Unauthorized", detail: detail)
    }
    public static func notFound(_ detail: String) -> Problem {
        Problem(.notFound, "not-found", title: "Not found", detail: detail)
    }
    public static func tooManyRequests(_ detail: String, retryAfter: Int) -> Problem {
        Problem(.tooManyRequests, "rate-limited", title: "Too many requests", detail: detail, retryAfter: retryAfter)
    }
    public static func databaseUnavailable() -> Problem {
        Problem(.serviceUnavailable, "database-unavailable", title: "Service unavailable", detail: "the database is not reachable; retry later")
    }
    public static func internalError(requestId: String) -> Problem {
        Problem(
            .internalServerError,
            "internal-error",
            title: "Internal error",
            detail: "an unexpected error occurred (request \(requestId)); it has been logged"
        )
    }
}
