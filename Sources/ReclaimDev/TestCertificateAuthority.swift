import Crypto
import Foundation
import ReclaimDomain
import SwiftASN1
import X509

/// A throw-away CA shaped like Apple's App Store signing hierarchy (the tests' and `reclaim dev --demo`'s) (root → intermediate → P-256 leaf, with Apple's
/// marker extensions), which signs arbitrary JSON into compact JWS with an `x5c` header.
///
/// By default its root copies the subject of "Apple Root CA - G3", so a verifier that trusted the `x5c` root or
/// matched roots by name would be fooled; pass ``root`` as a trusted root to accept its payloads.
public struct TestCertificateAuthority: Sendable {
    public let rootKey: P384.Signing.PrivateKey
    public let root: Certificate
    public let intermediateKey: P384.Signing.PrivateKey
    public let intermediate: Certificate
    public let leafKey: P256.Signing.PrivateKey
    public let leaf: Certificate

    /// - Parameters:
    ///   - leafValidity: when the leaf is valid (the root and intermediate span a wider window around it).
    ///   - leafMarker / intermediateMarker: whether to include Apple's marker extension on each.
    ///   - rootSubject: the root's (and the intermediate's issuer) name; Apple's by default.
    public init(
        leafValidity: ClosedRange<Date>? = nil,
        leafMarker: Bool = true,
        intermediateMarker: Bool = true,
        rootSubject: DistinguishedName? = nil
    ) throws {
        let now = Date()
        let validity = leafValidity ?? (now.addingTimeInterval(-86_400 * 30)...now.addingTimeInterval(86_400 * 365))
        let caNotBefore = validity.lowerBound.addingTimeInterval(-86_400 * 365)
        let caNotAfter = validity.upperBound.addingTimeInterval(86_400 * 365)

        // Most specific first (CN … C), the order Apple's certificates use, so the copy is byte-for-byte Apple's name.
        let rootName =
            try rootSubject
            ?? DistinguishedName {
                CommonName("Apple Root CA - G3")
                OrganizationalUnitName("Apple Certification Authority")
                OrganizationName("Apple Inc.")
                CountryName("US")
            }
        let intermediateName = try DistinguishedName {
            CommonName("Apple Worldwide Developer Relations Certification Authority")
            OrganizationalUnitName("G6")
            OrganizationName("Apple Inc.")
            CountryName("US")
        }
        let leafName = try DistinguishedName {
            CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing")
            OrganizationalUnitName("Apple Worldwide Developer Relations")
            OrganizationName("Apple Inc.")
            CountryName("US")
        }

        rootKey = P384.Signing.PrivateKey()
        intermediateKey = P384.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()

        root = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(rootKey.publicKey),
            notValidBefore: caNotBefore,
            notValidAfter: caNotAfter,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        intermediate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(intermediateKey.publicKey),
            notValidBefore: caNotBefore,
            notValidAfter: caNotAfter,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if intermediateMarker {
                    // Apple's markers are non-critical extensions whose value is an ASN.1 NULL.
                    Certificate.Extension(oid: AppleMarkerExtensionPolicy.intermediateMarkerOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey)
        )
        leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(leafKey.publicKey),
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if leafMarker {
                    Certificate.Extension(oid: AppleMarkerExtensionPolicy.leafMarkerOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
        )
    }

    /// DER of a certificate.
    public static func der(_ certificate: Certificate) throws -> Data {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    /// The `x5c` header value: standard base64 DER of leaf, intermediate and root.
    public func x5c() throws -> [String] {
        try [leaf, intermediate, root].map { try Self.der($0).base64EncodedString() }
    }

    /// Signs `payload` (JSON bytes) into a compact ES256 JWS with the leaf key and the `x5c` chain.
    /// `header` overrides or adds header members (e.g. `["alg": "none"]`, or `["x5c": [...]]`).
    public func sign(payload: Data, header overrides: [String: Any] = [:]) throws -> String {
        var header: [String: Any] = ["alg": "ES256", "x5c": try x5c()]
        for (key, value) in overrides { header[key] = value }
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        return try Self.signCompact(headerJSON: headerJSON, payload: payload, key: leafKey)
    }

    /// Signs a JSON object (as `JSONSerialization` accepts it).
    public func sign(json object: [String: Any], header overrides: [String: Any] = [:]) throws -> String {
        try sign(payload: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), header: overrides)
    }

    /// Signs an encodable value.
    public func sign(_ value: some Encodable, header overrides: [String: Any] = [:]) throws -> String {
        try sign(payload: try JSONEncoder().encode(value), header: overrides)
    }

    /// `base64url(header).base64url(payload).base64url(r‖s)` signed with `key`.
    public static func signCompact(headerJSON: Data, payload: Data, key: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
