import Foundation

/// A make-good: `POST /v1/grants` with `"kind": "extension"`, decoded and validated. Apple moves the subscription's
/// renewal date `extendByDays` later (Extend a Subscription Renewal Date): days of service at once, nothing for
/// the subscriber to buy. Apple: "Use this endpoint to compensate your customers for temporary service outages,
/// canceled events, or interruptions to live streamed events by extending the renewal date of their paid, active
/// subscription."
public struct ExtensionGrantRequest: Sendable, Equatable {
    public var bundleId: String
    public var appAccountToken: UUID?
    public var originalTransactionId: String?
    /// Only a subscription in this environment; nil: the newest of any.
    public var environment: String?
    /// Apple's `extendByDays`: "a number from 1 to 90".
    public var extendByDays: Int
    /// Apple's `extendReasonCode`: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int
    public var reason: String
    public var campaign: String

    public static let defaultCampaign = "make-good"
    public static let extendByDaysRange = 1...90
    public static let extendReasonCodes = 0...3
    /// Apple's `requestIdentifier` (the grant's Idempotency-Key): "The maximum length of the string is 128 characters."
    public static let maxIdempotencyKeyLength = 128

    public init(
        bundleId: String,
        appAccountToken: UUID?,
        originalTransactionId: String?,
        environment: String? = nil,
        extendByDays: Int,
        extendReasonCode: Int,
        reason: String,
        campaign: String = ExtensionGrantRequest.defaultCampaign
    ) {
        self.bundleId = bundleId
        self.appAccountToken = appAccountToken
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.reason = reason
        self.campaign = campaign
    }

    /// SHA-256 of every field, length-prefixed in a fixed order: the same Idempotency-Key with another request is
    /// another grant (refused).
    public var fingerprint: [UInt8] {
        let fields: [String?] = [
            bundleId, appAccountToken?.lowercaseString, originalTransactionId, environment, String(extendByDays), String(extendReasonCode), reason,
            campaign,
        ]
        return GrantSubscriber.fingerprint("reclaim-extension-grant-v1", fields)
    }

    /// A grant's `kind`: absent or `offer` (a promotional offer, ``GrantRequest``) or `extension` (this).
    public enum Kind: String, Sendable {
        case offer
        case `extension`

        /// The body's `kind`; throws ``InvalidInput`` for another.
        public init(body bytes: Data) throws(InvalidInput) {
            struct Body: Decodable { let kind: String? }
            guard let body = try? JSONDecoder().decode(Body.self, from: bytes) else {
                self = .offer
                return
            }  // Reported by the kind's own decoding.
            guard let text = body.kind else {
                self = .offer
                return
            }
            guard let kind = Kind(rawValue: text) else {
                throw InvalidInput("kind must be offer (a promotional offer) or extension (days added by Apple)")
            }
            self = kind
        }
    }
}

extension ExtensionGrantRequest {
    private struct Body: Decodable {
        let kind: String
        let bundleId: String
        let appAccountToken: String?
        let originalTransactionId: String?
        let environment: String?
        let extendByDays: Int
        let extendReasonCode: Int
        let reason: String
        let campaign: String?
    }

    /// Decodes and validates a request body; throws ``InvalidInput`` with the reason in words.
    public init(body bytes: Data) throws(InvalidInput) {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: bytes)
        } catch {
            throw InvalidInput(
                "an extension grant is JSON with kind: extension, bundleId, appAccountToken or originalTransactionId, extendByDays, extendReasonCode, reason"
            )
        }
        for (name, value) in [("bundleId", body.bundleId), ("reason", body.reason), ("campaign", body.campaign ?? Self.defaultCampaign)] {
            guard !value.isEmpty, value.count <= 200, !value.unicodeScalars.contains("\u{0}") else {
                throw InvalidInput("\(name) must be 1 to 200 characters")
            }
        }
        let token = try GrantSubscriber.check(
            appAccountToken: body.appAccountToken,
            originalTransactionId: body.originalTransactionId,
            environment: body.environment
        )
        guard Self.extendByDaysRange.contains(body.extendByDays) else {
            throw InvalidInput("extendByDays must be a number from 1 to 90 (Apple's limit)")
        }
        guard Self.extendReasonCodes.contains(body.extendReasonCode) else {
            throw InvalidInput("extendReasonCode must be 0 (undeclared), 1 (customer satisfaction), 2 (other) or 3 (service issue or outage)")
        }
        self.init(
            bundleId: body.bundleId,
            appAccountToken: token,
            originalTransactionId: body.originalTransactionId,
            environment: body.environment,
            extendByDays: body.extendByDays,
            extendReasonCode: body.extendReasonCode,
            reason: body.reason,
            campaign: body.campaign ?? Self.defaultCampaign
        )
    }

    /// Why Reclaim will not ask Apple, knowing the subscription ineligible; nil: ask (Apple decides the rest:
    /// a free offer period and Family Sharing are Apple's to refuse, named in its answer).
    ///
    /// Apple (`SubscriptionExtensionIneligibleError`): "Auto-renewable subscriptions in the following states aren't
    /// eligible for renewal date extensions: Subscriptions in a free offer period; Inactive subscriptions in a
    /// billing retry state; Subscriptions in a grace period state with an expiration date in the past;
    /// Subscriptions that have already received two renewal date extensions within the past 365 days; Expired
    /// subscriptions." And: "you can extend the renewal date twice within a year (365 days) per customer."
    public static func ineligibility(status: String, expiresAt: Date?, extensionsInPastYear: [Date], now: Date) -> String? {
        switch status {
        case "active": break
        case "billing_retry": return "the subscription is in Apple's billing retry: Apple extends only a paid, active subscription"
        case "grace_period": return "the subscription is in a billing grace period past its expiration date: Apple does not extend it"
        case "expired": return "the subscription has expired: Apple extends only an active one"
        case "revoked", "refunded": return "the subscription was \(status): Apple extends only an active one"
        default: return "the subscription's state is not known yet: Apple extends only an active one"
        }
        if let expiresAt, expiresAt <= now {
            return "the subscription expired on \(expiresAt.formatted(.iso8601)): Apple extends only an active one"
        }
        let year: TimeInterval = 365 * 86_400
        let recent = extensionsInPastYear.filter { now.timeIntervalSince($0) < year }.sorted()
        if recent.count >= 2 {
            let dates = recent.map { $0.formatted(.iso8601) }.joined(separator: " and ")
            return "the subscription's renewal date was extended twice in the past 365 days (\(dates)): Apple allows two a year"
        }
        return nil
    }
}
