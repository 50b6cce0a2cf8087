import Foundation

/// The parts of the delivery API's requests that come from the app: the `appAccountToken` query parameter, the
/// offer id in the path, and the body of an offer event.
public enum OfferRequestInput {
    /// The events an app reports about an offer.
    public static let events: Set<String> = ["shown", "dismissed", "purchase_started"]

    /// A UUID in its 36-character form (a query or path parameter); nil for anything else.
    public static func uuid(_ text: some StringProtocol) -> UUID? {
        guard text.utf8.count == 36 else { return nil }
        return UUID(uuidString: String(text))
    }

    /// The event of `{"event": "shown" | "dismissed" | "purchase_started"}`; nil for any other body.
    public static func event(body: Data) -> String? {
        struct EventBody: Decodable { let event: String }
        guard let event = try? JSONDecoder().decode(EventBody.self, from: body).event, events.contains(event) else { return nil }
        return event
    }

    /// The `signedTransaction` of `POST /v1/offers/lookup`'s body `{"signedTransaction": "<compact JWS>"}`: three
    /// base64url segments, at most `limit` bytes; its signature is checked later, by the verifier.
    public static func signedTransaction(body: Data, limit: Int) throws(InvalidInput) -> String {
        struct LookupBody: Decodable { let signedTransaction: String }
        guard let text = try? JSONDecoder().decode(LookupBody.self, from: body).signedTransaction else {
            throw InvalidInput("send {\"signedTransaction\": \"<JWS>\"}: the transaction's jwsRepresentation from StoreKit 2")
        }
        guard text.utf8.count <= limit else { throw InvalidInput("signedTransaction exceeds \(limit) bytes") }
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(base64URL.contains) }) else {
            throw InvalidInput("signedTransaction is not a compact JWS (three base64url segments joined by dots)")
        }
        return text
    }
}
