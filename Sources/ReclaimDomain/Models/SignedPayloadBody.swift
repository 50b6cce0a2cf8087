/// The HTTP body Apple posts for notifications and retention-messaging requests: `{"signedPayload": JWS}`.
public struct SignedPayloadBody: Codable, Sendable, Equatable {
    public var signedPayload: String

    public init(signedPayload: String) { self.signedPayload = signedPayload }
}
