import Foundation
import Hummingbird
import NIOCore
import ReclaimDomain

/// `POST /v1/apple/notifications`: Apple's App Store Server Notifications V2.
///
/// 200 only once the notification and its job are committed (or were already stored);
/// problem+json otherwise: 400 malformed, 401 forged, 403/422 not for a configured app,
/// 413 too large, 415 not JSON, 503 database unavailable (Apple retries non-2xx answers).
struct AppleNotificationRoutes {
    let ingest: NotificationIngest
    let maxBodyBytes: Int

    /// The two answers, `{"status":"stored"}` and `{"status":"duplicate"}`, encoded once: a
    /// JSONEncoder per request was a visible share of the ingest profile.
    static func answer(stored: Bool) -> ByteBuffer { stored ? storedAnswer : duplicateAnswer }
    private static let storedAnswer = ByteBuffer(string: #"{"status":"stored"}"#)
    private static let duplicateAnswer = ByteBuffer(string: #"{"status":"duplicate"}"#)

    func register(on router: Router<ReclaimRequestContext>) {
        router.post("/v1/apple/notifications") { request, context -> Response in
            let body = try await readJSONBody(
                request,
                context: context,
                limit: maxBodyBytes,
                record: { problem in
                    // Refusals before the body is read are recorded with what is known: no body.
                    ingest.recordRefusal(problem.type, detail: problem.detail, body: ByteBuffer(), logger: context.logger)
                }
            )
            let stored: Bool
            switch try await ingest.ingest(body: body, contentType: request.headers[.contentType], requestLogger: context.logger) {
            case .stored: stored = true
            case .duplicate: stored = false
            case .refused(let refusal): throw Problem(refusal)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: Self.answer(stored: stored)))
        }
    }
}

/// Reads a JSON request body up to `limit` bytes: 415 for another content type, 413 when larger (announced by
/// Content-Length or found while reading a chunked body), after which the connection is closed rather than
/// drained.
func readJSONBody(_ request: Request, context: ReclaimRequestContext, limit: Int, record: (Problem) async -> Void) async throws -> ByteBuffer {
    let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
    guard mediaType == "application/json" else {
        let problem = Problem(.unsupportedMediaType, "send the body as application/json (got \(mediaType ?? "no content type"))")
        await record(problem)
        throw problem
    }
    let tooLarge = Problem(.bodyTooLarge, "the body exceeds \(limit) bytes")
    if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
        await record(tooLarge)
        context.closeSoon()
        throw tooLarge
    }
    let body: ByteBuffer
    do {
        body = try await request.body.collect(upTo: limit)
    } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
        // NIOTooManyBytesError for a chunked body, HTTPError for others: both are the same refusal.
        await record(tooLarge)
        context.closeSoon()
        throw tooLarge
    }
    // Text the database cannot store is refused here, for every JSON body, naming the field (not 503 from the database).
    if body.withUnsafeReadableBytes(StorableText.mayHoldNUL), let path = StorableText.nulPath(inJSON: Data(body.readableBytesView)) {
        let problem = Problem(.invalidText, StorableText.nulRefusal(path).reason)
        await record(problem)
        throw problem
    }
    return body
}
