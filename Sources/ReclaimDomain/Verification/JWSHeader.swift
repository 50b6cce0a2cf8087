import Foundation

/// The protected header of a verified JWS, as far as Reclaim uses it.
public struct JWSHeader: Sendable, Equatable {
    /// Always "ES256" once verified.
    public var alg: String
    /// DER of the `x5c` certificates, leaf first, exactly as sent.
    public var x5c: [Data]
    public var kid: String?
    public var typ: String?

    public init(alg: String, x5c: [Data], kid: String? = nil, typ: String? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.kid = kid
        self.typ = typ
    }
}
