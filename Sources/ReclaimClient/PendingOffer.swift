import Foundation

/// An offer Reclaim holds for the subscriber, as `GET /v1/offers` and `POST /v1/offers/lookup` return it, ready for
/// StoreKit.
public struct PendingOffer: Decodable, Sendable, Equatable, Identifiable {
    /// The StoreKit 1 signature (`SKPaymentDiscount`, or StoreKit 2's
    /// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
    public struct StoreKit1: Decodable, Sendable, Equatable {
        public let keyIdentifier: String
        /// Lowercase UUID, as signed.
        public let nonce: String
        /// UNIX milliseconds, as signed.
        public let timestamp: Int64
        /// Base64 DER ECDSA signature.
        public let signature: String
        /// The lowercase appAccountToken the signature covers (empty when the app sets none): the payment must
        /// carry exactly this.
        public let applicationUsername: String
    }

    public struct StoreKit2: Decodable, Sendable, Equatable {
        /// For `Product.PurchaseOption.promotionalOffer(_:compactJWS:)`.
        public let compactJWS: String
    }

    /// The App Store environment the offer was issued for, as Apple names it.
    public enum Environment: Sendable, Hashable, Decodable, CustomStringConvertible {
        case production
        case sandbox
        /// A name this client does not know (a newer server, another Apple environment): kept as sent. An offer with
        /// it decodes like any other; a name the client does not know never fails the answer.
        case other(String)

        public init(rawValue: String) {
            switch rawValue {
            case "Production": self = .production
            case "Sandbox": self = .sandbox
            default: self = .other(rawValue)
            }
        }

        /// The name as the server sent it.
        public var rawValue: String {
            switch self {
            case .production: "Production"
            case .sandbox: "Sandbox"
            case .other(let name): name
            }
        }

        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
        }
    }

    /// How the client fetched an offer, so that it can fetch it again (``ReclaimClient/refreshed(_:)``).
    enum Lookup: Sendable, Equatable {
        case appAccountToken(UUID)
        case signedTransaction(String)
    }

    public let id: String
    public let campaign: String
    public let environment: Environment
    public let productIdentifier: String
    public let offerIdentifier: String
    public let storeKit1: StoreKit1
    public let storeKit2: StoreKit2
    /// After it the offer is no longer delivered (Reclaim's `deliverable_until`). StoreKit does not read it: the
    /// signatures' age (``signedAt``) is what the App Store holds a purchase to.
    public let expiresAt: Date
    /// How this offer was fetched; nil for one decoded outside the client.
    var lookup: Lookup?

    /// When Reclaim signed this offer (both signatures; `storeKit1.timestamp`).
    public var signedAt: Date { Date(timeIntervalSince1970: Double(storeKit1.timestamp) / 1000) }

    /// Apple on `SKPaymentDiscount.timestamp`: "The timestamp keeps the payment discount active for 24 hours."
    public static let signatureLifetime: TimeInterval = 24 * 3600

    /// The age at which ``ReclaimClient`` fetches an offer again before buying with it: four hours inside Apple's
    /// window, for the time the purchase sheet stays open and for a device clock that runs behind the server's.
    public static let refetchAge: TimeInterval = 20 * 3600

    /// Whether the signatures are old enough (``refetchAge``) to be fetched afresh before a purchase: an app left
    /// running past Apple's 24 hours would otherwise have its purchase refused.
    public func signatureIsStale(at now: Date = Date()) -> Bool {
        now.timeIntervalSince(signedAt) >= Self.refetchAge
    }

    enum CodingKeys: String, CodingKey {
        case id, campaign, environment, productIdentifier, offerIdentifier, storeKit1, storeKit2, expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        campaign = try container.decode(String.self, forKey: .campaign)
        environment = try container.decode(Environment.self, forKey: .environment)
        productIdentifier = try container.decode(String.self, forKey: .productIdentifier)
        offerIdentifier = try container.decode(String.self, forKey: .offerIdentifier)
        storeKit1 = try container.decode(StoreKit1.self, forKey: .storeKit1)
        storeKit2 = try container.decode(StoreKit2.self, forKey: .storeKit2)
        let text = try container.decode(String.self, forKey: .expiresAt)
        guard let expiresAt = Self.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: .expiresAt, in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        self.expiresAt = expiresAt
        lookup = nil
    }

    /// An ISO 8601 date and time, with or without fractional seconds (Reclaim sends none).
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
