import Foundation
import Hummingbird
import ReclaimDomain

/// An RFC 9457 problem (`application/problem+json`): the one error type every route throws.
///
/// Its ``type`` (slug, status and title) comes from the catalog, ``ProblemType``, so clients and tests can rely on
/// it; `detail` says in words what was wrong. Never put database text or key material in `detail`; it is cut to
/// ``detailLimit`` characters with control characters escaped, since it may quote what a client sent.
public struct Problem: HTTPResponseError, Equatable {
    public let type: ProblemType
    public let detail: String
    /// Seconds a client should wait before retrying (`Retry-After`); 503s default to 5.
    public let retryAfter: Int?

    public init(_ type: ProblemType, _ detail: String, retryAfter: Int? = nil) {
        self.type = type
        self.detail = LogText.bounded(detail, limit: Self.detailLimit)
        self.retryAfter = retryAfter ?? (type.status == .serviceUnavailable ? 5 : nil)
    }

    public var status: HTTPResponse.Status { type.status }

    /// The longest `detail`: room for a sentence and a bounded quote of the input (``LogText/echoLimit``).
    public static let detailLimit = 300

    struct Body: Encodable {
        let type: String
        let title: String
        let status: Int
        let detail: String
        let instance: String?
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(type: type.uri, title: type.title, status: status.code, detail: detail, instance: request.uri.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if let retryAfter { headers[.retryAfter] = "\(retryAfter)" }
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="reclaim""# }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body))))
    }
}
