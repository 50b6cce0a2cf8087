import Foundation

/// What an admin asked to grant: the body of `POST /v1/grants`, decoded, validated and normalized (defaults
/// applied), as stored in `reclaim.grants`.
public struct GrantRequest: Sendable, Equatable {
    public var bundleId: String
    public var appAccountToken: UUID?
    public var originalTransactionId: String?
    /// Only a subscription in this environment; nil: the newest of any.
    public var environment: String?
    public var productId: String
    public var offerIdentifier: String
    public var reason: String
    public var campaign: String
    /// How long the offer stays deliverable, in seconds (1 s to 90 days; default 7 days).
    public var deliverableFor: Int64
    /// Retention Messaging: the approved message Apple shows with this offer in its cancellation sheet; nil: the
    /// message of the configured campaign named `campaign`, if any.
    public var messageIdentifier: String?
    /// Grant even when the app's discount budget is spent for the subscriber.
    public var overrideDiscountBudget: Bool = false

    public static let defaultDeliverableFor: Int64 = 7 * 86_400
    public static let maximumDeliverableFor: Int64 = 90 * 86_400

    public init(
        bundleId: String,
        appAccountToken: UUID?,
        originalTransactionId: String?,
        environment: String? = nil,
        productId: String,
        offerIdentifier: String,
        reason: String,
        campaign: String,
        deliverableFor: Int64 = GrantRequest.defaultDeliverableFor,
        messageIdentifier: String? = nil
    ) {
        self.bundleId = bundleId
        self.appAccountToken = appAccountToken
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.reason = reason
        self.campaign = campaign
        self.deliverableFor = deliverableFor
        self.messageIdentifier = messageIdentifier
    }

    /// SHA-256 of every field, each length-prefixed in a fixed order: the same Idempotency-Key with a request
    /// whose fingerprint differs is another grant.
    public var fingerprint: [UInt8] {
        var fields: [String?] = [
            bundleId, appAccountToken?.lowercaseString, originalTransactionId, environment, productId, offerIdentifier, reason, campaign,
            String(deliverableFor),
        ]
        // Appended only when given, so that a grant made before the field existed keeps its fingerprint.
        if let messageIdentifier { fields.append(messageIdentifier) }
        // NUL is refused in every text field, so this cannot be a messageIdentifier.
        if overrideDiscountBudget { fields.append("\u{0}overrideDiscountBudget") }
        return GrantSubscriber.fingerprint("reclaim-grant-v1", fields)
    }

    /// Whether an `Idempotency-Key` header is acceptable: 1 to 200 visible ASCII characters.
    public static func isValidIdempotencyKey(_ key: some StringProtocol) -> Bool {
        (1...200).contains(key.utf8.count) && key.utf8.allSatisfy { (0x21..<0x7F).contains($0) }
    }
}

extension GrantRequest {
    /// The JSON body as sent.
    private struct Body: Decodable {
        let bundleId: String
        let appAccountToken: String?
        let originalTransactionId: String?
        let environment: String?
        let productId: String
        let offerIdentifier: String
        let reason: String
        let campaign: String
        let deliverableFor: String?
        let messageIdentifier: String?
        let overrideDiscountBudget: Bool?
    }

    /// Decodes and validates a request body; throws ``InvalidInput`` with the reason in words.
    public init(body bytes: Data) throws(InvalidInput) {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: bytes)
        } catch {
            throw InvalidInput(
                "the body must be JSON with bundleId, appAccountToken or originalTransactionId, productId, offerIdentifier, reason, campaign"
            )
        }
        for (name, value) in [
            ("bundleId", body.bundleId), ("productId", body.productId), ("offerIdentifier", body.offerIdentifier), ("reason", body.reason),
            ("campaign", body.campaign),
        ] {
            guard !value.isEmpty, value.count <= 200, !value.unicodeScalars.contains("\u{2063}") else {
                throw InvalidInput("\(name) must be 1 to 200 characters")
            }
        }
        if let message = body.messageIdentifier, message.isEmpty || message.count > 200 {
            throw InvalidInput("messageIdentifier must be 1 to 200 characters")
        }
        let token = try GrantSubscriber.check(
            appAccountToken: body.appAccountToken,
            originalTransactionId: body.originalTransactionId,
            environment: body.environment
        )
        var deliverableFor = Self.defaultDeliverableFor
        if let text = body.deliverableFor {
            guard let seconds = DurationText.seconds(text), seconds > 0, seconds <= Self.maximumDeliverableFor else {
                throw InvalidInput("deliverableFor must be a duration from 1s to 90d, e.g. 7d")
            }
            deliverableFor = seconds
        }
        self.init(
            bundleId: body.bundleId,
            appAccountToken: token,
            originalTransactionId: body.originalTransactionId,
            environment: body.environment,
            productId: body.productId,
            offerIdentifier: body.offerIdentifier,
            reason: body.reason,
            campaign: body.campaign,
            deliverableFor: deliverableFor,
            messageIdentifier: body.messageIdentifier
        )
        overrideDiscountBudget = body.overrideDiscountBudget ?? false
    }
}
