import Foundation

/// A decoded Apple payload that knows its own `signedDate`, so ``AppleJWSVerifier/verifyDecoded(_:as:what:)``
/// decodes the payload once and takes the chain's validation time from it, instead of probing the JSON separately.
protocol SignedDateCarrying {
    /// `signedDate` as a date; `nil` when the payload has none.
    var signedDateValue: Date? { get }
}

extension SignedDateCarrying {
    static func date(milliseconds: Int64?) -> Date? {
        milliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}

extension NotificationPayload: SignedDateCarrying {
    var signedDateValue: Date? { Self.date(milliseconds: signedDate) }
}

extension TransactionInfo: SignedDateCarrying {
    var signedDateValue: Date? { Self.date(milliseconds: signedDate) }
}

extension RenewalInfo: SignedDateCarrying {
    var signedDateValue: Date? { Self.date(milliseconds: signedDate) }
}

extension RealtimeRequest: SignedDateCarrying {
    var signedDateValue: Date? { Self.date(milliseconds: signedDate) }
}
