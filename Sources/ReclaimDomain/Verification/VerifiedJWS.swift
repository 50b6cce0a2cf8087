import Foundation

/// A JWS whose chain and signature have been verified: its header and the exact payload bytes that were signed.
public struct VerifiedJWS: Sendable, Equatable {
    public var header: JWSHeader
    /// The decoded payload (UTF-8 JSON from Apple).
    public var payload: Data
    /// The instant the certificate chain was checked at: the payload's `signedDate`, or the clock without one.
    public var validationTime: Date
    /// SHA-256 of the trusted root the chain ends in; which apps it may vouch for is ``RootTrust``'s call.
    public var anchor: Data

    public init(header: JWSHeader, payload: Data, validationTime: Date, anchor: Data) {
        self.header = header
        self.payload = payload
        self.validationTime = validationTime
        self.anchor = anchor
    }
}
