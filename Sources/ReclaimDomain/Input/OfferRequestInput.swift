import Foundation

/// The parts of the delivery API's requests that come from the app: the `appAccountToken` query parameter, the
/// offer id in the path, and the body of an offer event.
public enum OfferRequestInput {
    /// The events an app reports about an offer. `purchase_pending`: StoreKit answered `.pending` (Ask to Buy, or a
    /// purchase awaiting approval); `purchase_failed`: StoreKit threw, and the body may carry the error.
    public static let events: Set<String> = ["shown", "dismissed", "purchase_started", "purchase_pending", "purchase_failed"]

    /// The event that may carry `error`.
    public static let failedEvent = "purchase_failed"

    /// The most characters (Unicode scalars, as JSON Schema's maxLength and PostgreSQL's char_length count them) of a
    /// purchase_failed event's `error`; the schema holds the column to it.
    public static let maxErrorCharacters = 256

    /// An offer event's body: `{"event": "purchase_failed", "error": "<StoreKit's error>"}`, or any other event alone.
    public struct EventBody: Equatable, Sendable {
        public let event: String
        /// purchase_failed only: the error the app reports, 1 to ``maxErrorCharacters`` characters, no NUL.
        public let error: String?
    }

    /// Why an event body was refused: `nul` when a string held U+0000, which cannot be stored (400 invalid-text), else
    /// any other shape (400 invalid-event).
    public struct EventRefusal: Error, Equatable, Sendable {
        public let reason: String
        public let nul: Bool
    }

    /// A UUID in its 36-character form (a query or path parameter); nil for anything else.
    public static func uuid(_ text: some StringProtocol) -> UUID? {
        guard text.utf8.count == 36 else { return nil }
        return UUID(uuidString: String(text))
    }

    /// The event of `{"event": "shown" | "dismissed" | "purchase_started" | "purchase_pending" | "purchase_failed"}`,
    /// and for purchase_failed the optional `"error"`: a string of 1 to ``maxErrorCharacters`` characters.
    public static func event(body: Data) throws(EventRefusal) -> EventBody {
        struct Body: Decodable {
            let event: String
            let error: String?
        }
        // Before decoding: JSONDecoder would read a NUL escape, and one hidden behind a duplicate key too.
        if let path = StorableText.nulPath(inJSON: body) { throw EventRefusal(reason: StorableText.nulRefusal(path).reason, nul: true) }
        let names = events.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        guard let decoded = try? JSONDecoder().decode(Body.self, from: body), events.contains(decoded.event) else {
            throw EventRefusal(reason: "the body must be {\"event\": E} with E one of \(names)", nul: false)
        }
        guard let error = decoded.error else { return EventBody(event: decoded.event, error: nil) }
        guard decoded.event == failedEvent else {
            throw EventRefusal(reason: "only \(failedEvent) carries an error; \(decoded.event) is sent alone", nul: false)
        }
        let length = error.unicodeScalars.count
        guard (1...maxErrorCharacters).contains(length) else {
            throw EventRefusal(reason: "error must be 1 to \(maxErrorCharacters) characters, not \(length)", nul: false)
        }
        return EventBody(event: decoded.event, error: error)
    }

    /// The `signedTransaction` of `POST /v1/offers/lookup`'s body `{"signedTransaction": "<compact JWS>"}`: three
    /// base64url segments, at most `limit` bytes; its signature is checked later, by the verifier.
    public static func signedTransaction(body: Data, limit: Int) throws(InvalidInput) -> String {
        struct LookupBody: Decodable { let signedTransaction: String }
        guard let text = try? JSONDecoder().decode(LookupBody.self, from: body).signedTransaction else {
            throw InvalidInput("send {\"signedTransaction\": \"<JWS>\"}: the transaction's jwsRepresentation from StoreKit 2")
        }
        return try signedTransaction(text, limit: limit)
    }

    /// A signed transaction named in a body of another shape (`POST /v1/cancel-flow`): at most `limit` bytes, three
    /// base64url segments; its signature is checked later, by the verifier.
    public static func signedTransaction(_ text: String, limit: Int) throws(InvalidInput) -> String {
        guard text.utf8.count <= limit else { throw InvalidInput("signedTransaction exceeds \(limit) bytes") }
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(base64URL.contains) }) else {
            throw InvalidInput("signedTransaction is not a compact JWS (three base64url segments joined by dots)")
        }
        return text
    }
}
