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
}
