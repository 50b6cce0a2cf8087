import Foundation

/// An offer code a campaign issued to the subscriber (ReclaimClient 3.0, ``ReclaimClient/pendingOffersAndCodes(appAccountToken:)``):
/// the subscriber redeems it in Apple's redemption sheet (``ReclaimClient/redeem(_:in:)`` where Apple declares one) or
/// by its ``redemptionURL``. Apple's sheet asks the subscriber to type the code: show ``code`` beside it.
public struct PendingOfferCode: Decodable, Sendable, Equatable, Identifiable {
    /// The decision that issued it; events about it are recorded under this id.
    public let id: String
    public let campaign: String
    public let environment: PendingOffer.Environment
    public let productIdentifier: String
    /// The offer-code offer's reference name in App Store Connect.
    public let offerIdentifier: String
    /// The one-time-use code: a bearer secret, keep it out of logs and analytics.
    public let code: String
    /// Redeems the code in the App Store in one tap: for platforms without Apple's sheet (tvOS, watchOS) and for
    /// sharing outside the app.
    public let redemptionURL: URL
    /// The earlier of the code's expiry and the end of the campaign's delivery window.
    public let expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case id, campaign, environment, productIdentifier, offerIdentifier, expiresAt
        case code = "offerCode"
        case redemptionURL = "redemptionUrl"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        campaign = try container.decode(String.self, forKey: .campaign)
        environment = try container.decode(PendingOffer.Environment.self, forKey: .environment)
        productIdentifier = try container.decode(String.self, forKey: .productIdentifier)
        offerIdentifier = try container.decode(String.self, forKey: .offerIdentifier)
        code = try container.decode(String.self, forKey: .code)
        redemptionURL = try container.decode(URL.self, forKey: .redemptionURL)
        let text = try container.decode(String.self, forKey: .expiresAt)
        guard let expiresAt = PendingOffer.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: .expiresAt, in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        self.expiresAt = expiresAt
    }
}

/// What `GET /v1/offers?include=offerCodes` holds for the subscriber: the signed promotional offers, and the offer
/// codes. Elements of a kind this client does not know are left out, never a reason to fail the answer.
public struct PendingOffersAndCodes: Sendable, Equatable {
    public var offers: [PendingOffer]
    public var codes: [PendingOfferCode]

    public init(offers: [PendingOffer] = [], codes: [PendingOfferCode] = []) {
        self.offers = offers
        self.codes = codes
    }

    /// One element of the answer's `offers`, by its `kind` (none: a promotional offer, as 2.0 servers send it).
    struct Element: Decodable {
        let offer: PendingOffer?
        let code: PendingOfferCode?

        enum CodingKeys: String, CodingKey { case kind }

        init(from decoder: any Decoder) throws {
            switch try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .kind) {
            case nil, "promotionalOffer"?: (offer, code) = (try PendingOffer(from: decoder), nil)
            case "offerCode"?: (offer, code) = (nil, try PendingOfferCode(from: decoder))
            default: (offer, code) = (nil, nil)
            }
        }
    }
}
