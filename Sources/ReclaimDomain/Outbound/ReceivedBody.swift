/// How a notification's request body looked, so that forwarding sends the same bytes without storing the
/// signedPayload twice: the body is the text before the payload, the payload, and the text after it.
///
/// Apple's body is `{"signedPayload":"<JWS>"}` (whitespace may vary), which holds the JWS verbatim: then only the
/// few bytes around it are kept. A body that spells the JWS with escapes (valid JSON too) is kept whole.
public struct ReceivedBody: Sendable, Equatable {
    public var contentType: String
    /// Text before the signedPayload; the whole body when `isWhole`.
    public var prefix: String
    /// Text after the signedPayload; empty when `isWhole`.
    public var suffix: String
    public var isWhole: Bool

    /// The body a notification from Apple's history (which has no request) is forwarded with.
    public static let history = ReceivedBody(contentType: "application/json", prefix: #"{"signedPayload":""#, suffix: #""}"#, isWhole: false)

    public init(contentType: String, prefix: String, suffix: String, isWhole: Bool) {
        self.contentType = contentType
        self.prefix = prefix
        self.suffix = suffix
        self.isWhole = isWhole
    }

    /// Splits `body` around its verbatim `signedPayload`, or keeps it whole.
    public init(body: some Collection<UInt8>, signedPayload: String, contentType: String?) {
        self.contentType = contentType ?? "application/json"
        let bytes = Array(body)
        let payload = Array(signedPayload.utf8)
        // The payload is nearly the whole body, so few offsets can hold it and most fail at the first byte.
        if bytes.count >= payload.count, !payload.isEmpty {
            for start in 0...(bytes.count - payload.count) where bytes[start] == payload[0] {
                if bytes[start..<(start + payload.count)].elementsEqual(payload) {
                    prefix = String(decoding: bytes[..<start], as: UTF8.self)
                    suffix = String(decoding: bytes[(start + payload.count)...], as: UTF8.self)
                    isWhole = false
                    return
                }
            }
        }
        prefix = String(decoding: bytes, as: UTF8.self)
        suffix = ""
        isWhole = true
    }

    /// The body again, byte for byte.
    public func body(signedPayload: String) -> [UInt8] {
        if isWhole { return Array(prefix.utf8) }
        return Array(prefix.utf8) + Array(signedPayload.utf8) + Array(suffix.utf8)
    }
}
