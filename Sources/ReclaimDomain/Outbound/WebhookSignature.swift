import Crypto
import Foundation

/// A Standard Webhooks signing secret: `whsec_` and the base64 of the key's bytes, as the receiver holds it too.
public struct WebhookSecret: Sendable {
    let key: SymmetricKey

    /// Reads the text of a secret file (surrounding whitespace ignored).
    /// - Throws: ``WebhookSecretError`` naming what is wrong, never quoting the secret.
    public init(text: String) throws(WebhookSecretError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("whsec_") else { throw .notWhsec }
        guard let bytes = Data(base64Encoded: String(trimmed.dropFirst("whsec_".count))) else { throw .notBase64 }
        // Standard Webhooks recommends secrets of 24 to 64 random bytes; a shorter one is guessable.
        guard bytes.count >= 24 else { throw .length(bytes.count) }
        key = SymmetricKey(data: bytes)
    }

    /// A new random secret of 32 bytes, as text for a secret file.
    public static func generateText() -> String {
        "whsec_" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}

public enum WebhookSecretError: Error, Equatable, CustomStringConvertible {
    case notWhsec, notBase64
    case length(Int)

    public var description: String {
        switch self {
        case .notWhsec: "not a Standard Webhooks secret: it must read whsec_<base64> (reclaim webhooks new-secret makes one)"
        case .notBase64: "the text after whsec_ is not base64"
        case .length(let count): "the secret is \(count) bytes; use 24 or more (reclaim webhooks new-secret makes one of 32)"
        }
    }
}

/// The `webhook-signature` header of Standard Webhooks (standardwebhooks.com, spec 1.0.0): for each secret,
/// `v1,` and the base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, the signatures separated
/// by spaces. Two secrets sign during a rotation, so a receiver holding either accepts the message.
public enum WebhookSignature {
    public static func header(id: String, timestamp: Int64, body: some Collection<UInt8>, secrets: [WebhookSecret]) -> String {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        return secrets.map { secret in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: secret.key)).base64EncodedString()
        }.joined(separator: " ")
    }
}
