import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id that appears in its log lines (`request_id` in JSON logs) and in the
/// response's `X-Request-Id` header, so an operator can find a client's request in the logs.
///
/// A proxy's id (`X-Request-Id` on the request) is kept when it is short and plain, so one id follows
/// the request through the proxy's logs and ours; anything else is replaced by Hummingbird's own id
/// rather than copied into logs.
struct RequestIdMiddleware<Context: RequestContext>: RouterMiddleware {
    static var header: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let incoming = request.headers[Self.header], Self.isPlain(incoming) {
            context.logger[metadataKey: "hb.request.id"] = .string(incoming)
        }
        let id = context.id
        // ProblemMiddleware, inside this one, has turned every error into a response.
        var response = try await next(request, context)
        response.headers[Self.header] = id
        return response
    }

    /// 1–128 characters of letters, digits, `-`, `_`, `.` and `:`: nothing a log reader could mistake.
    static func isPlain(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
                    true
                default: false
                }
            }
    }
}
