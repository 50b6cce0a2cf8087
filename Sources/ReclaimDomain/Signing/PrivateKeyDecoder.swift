import Crypto
import Foundation
import SwiftASN1

/// Turns the bytes of a key file into a P-256 private key, or into a `KeyLoadingError` that says exactly what the
/// file holds instead.
///
/// It walks the ASN.1 itself rather than handing the bytes to swift-crypto, because swift-crypto only says
/// "invalid key" for an RSA or secp256k1 key, and the most common support question is "I exported the wrong key".
enum PrivateKeyDecoder {
    /// Decodes PEM (one or more blocks; the first private-key block wins) or raw DER.
    static func decode(_ contents: Data, source: String) throws(KeyLoadingError) -> P256.Signing.PrivateKey {
        let bytes = [UInt8](contents)
        guard bytes.contains(where: { !Self.isWhitespace($0) }) else {
            throw KeyLoadingError(.empty, source: source, "the key file is empty")
        }
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN ") {
            return try decodePEM(text, source: source)
        }
        // Every key layout is an ASN.1 SEQUENCE, whose DER starts with 0x30.
        guard bytes.first == 0x30 else {
            throw KeyLoadingError(
                .notAKey,
                source: source,
                "not a private key: expected a PKCS#8 or SEC1 PEM block (an App Store Connect .p8 file is PKCS#8) or DER"
            )
        }
        return try decodeDER(bytes, source: source)
    }

    // MARK: PEM

    /// One `-----BEGIN label-----` … `-----END label-----` block.
    private struct PEMBlock {
        var label: String
        var headers: [String]
        var body: String
    }

    private static func decodePEM(_ text: String, source: String) throws(KeyLoadingError) -> P256.Signing.PrivateKey {
        let blocks = pemBlocks(in: text)
        guard !blocks.isEmpty else {
            throw KeyLoadingError(.notAKey, source: source, "the PEM block has no matching \"-----END ...-----\" line")
        }
        // "EC PARAMETERS" precedes the key in `openssl ecparam -genkey` output; certificates may sit beside it.
        let keyLabels: Set<String> = [
            "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
        ]
        guard let block = blocks.first(where: { keyLabels.contains($0.label) }) else {
            let labels = blocks.map(\.label)
            if labels.contains(where: { $0.hasSuffix("PUBLIC KEY") }) {
                throw KeyLoadingError(
                    .publicKeyOnly,
                    source: source,
                    "holds a public key only; signing needs the private key (.p8) from App Store Connect"
                )
            }
            throw KeyLoadingError(
                .notAKey,
                source: source,
                "holds no private key (found PEM \(labels.map { "\"\($0)\"" }.joined(separator: ", ")))"
            )
        }
        switch block.label {
        case "ENCRYPTED PRIVATE KEY":
            throw KeyLoadingError(
                .encryptedKey,
                source: source,
                "the key is encrypted with a password; export it unencrypted (openssl pkey -in KEY -out KEY.p8 asks for the password once)"
            )
        case "RSA PRIVATE KEY":
            throw KeyLoadingError(.rsaKey, source: source, Self.rsaDetail)
        case "DSA PRIVATE KEY":
            throw KeyLoadingError(
                .unsupportedAlgorithm,
                source: source,
                "holds a DSA private key; App Store Connect subscription keys are ECDSA P-256"
            )
        case "OPENSSH PRIVATE KEY":
            throw KeyLoadingError(
                .unsupportedAlgorithm,
                source: source,
                "holds an OpenSSH private key; use the .p8 file App Store Connect gives, not an SSH key"
            )
        default:
            break
        }
        // Legacy OpenSSL encryption keeps the "EC PRIVATE KEY" label and adds "Proc-Type: 4,ENCRYPTED".
        if block.headers.contains(where: { $0.uppercased().contains("ENCRYPTED") }) {
            throw KeyLoadingError(
                .encryptedKey,
                source: source,
                "the key is encrypted with a password (Proc-Type: 4,ENCRYPTED); export it unencrypted (openssl pkey -in KEY -out KEY.p8 asks for the password once)"
            )
        }
        guard let der = Data(base64Encoded: block.body), !der.isEmpty else {
            throw KeyLoadingError(.malformed, source: source, "the \"\(block.label)\" PEM block is not valid base64")
        }
        return try decodeDER([UInt8](der), source: source)
    }

    /// Splits text into PEM blocks, leniently: keys pasted into secret stores often lose their line breaks,
    /// get CRLF endings or carry literal "\n" sequences, none of which change the base64 inside.
    private static func pemBlocks(in text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN ") {
            guard let labelEnd = rest[begin.upperBound...].range(of: "-----") else { break }
            let label = String(rest[begin.upperBound..<labelEnd.lowerBound])
            guard let end = rest[labelEnd.upperBound...].range(of: "-----END \(label)-----") else { break }
            let inner = rest[labelEnd.upperBound..<end.lowerBound].replacingOccurrences(of: "\\n", with: "\n")
            var headers: [String] = []
            var body = ""
            for line in inner.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
                if line.contains(":") {
                    headers.append(String(line))  // RFC 1421 headers such as Proc-Type and DEK-Info
                } else {
                    body += line.filter { !$0.isWhitespace }
                }
            }
            blocks.append(PEMBlock(label: label, headers: headers, body: body))
            rest = rest[end.upperBound...]
        }
        return blocks
    }

    // MARK: DER

    private static let rsaDetail =
        "holds an RSA private key; App Store Connect subscription keys are ECDSA P-256 (the .p8 file from Users and Access → Integrations → In-App Purchase)"

    /// Recognises PKCS#8 PrivateKeyInfo, SEC1 ECPrivateKey, PKCS#8 EncryptedPrivateKeyInfo, PKCS#1 RSA keys and
    /// SubjectPublicKeyInfo, by the shape of the outer SEQUENCE.
    private static func decodeDER(_ der: [UInt8], source: String) throws(KeyLoadingError) -> P256.Signing.PrivateKey {
        let root: ASN1Node
        do {
            root = try DER.parse(der)
        } catch {
            // Some tools write BER (e.g. non-minimal lengths); the structure is the same.
            do { root = try BER.parse(der) } catch {
                throw KeyLoadingError(.notAKey, source: source, "not a private key: the data is neither PEM nor valid DER")
            }
        }
        guard root.identifier == .sequence, case .constructed(let collection) = root.content else {
            throw KeyLoadingError(.notAKey, source: source, "not a private key: the DER is not a SEQUENCE")
        }
        let fields = Array(collection)
        let tags = fields.map(\.identifier)

        // EncryptedPrivateKeyInfo: SEQUENCE { AlgorithmIdentifier, OCTET STRING }
        if tags == [.sequence, .octetString] {
            throw KeyLoadingError(
                .encryptedKey,
                source: source,
                "the key is encrypted with a password (PKCS#8 EncryptedPrivateKeyInfo); export it unencrypted"
            )
        }
        // SubjectPublicKeyInfo: SEQUENCE { AlgorithmIdentifier, BIT STRING }
        if tags == [.sequence, .bitString] {
            throw KeyLoadingError(
                .publicKeyOnly,
                source: source,
                "holds a public key only; signing needs the private key (.p8) from App Store Connect"
            )
        }
        guard tags.first == .integer, fields.count >= 2 else {
            throw KeyLoadingError(.notAKey, source: source, "not a private key: unrecognised ASN.1 structure")
        }
        switch tags[1] {
        case .sequence where fields.count >= 3 && tags[2] == .octetString:
            return try decodePKCS8(algorithm: fields[1], privateKey: fields[2], source: source)
        case .octetString:
            return try decodeSEC1(root, expectedCurve: nil, source: source)
        case .integer where tags.allSatisfy({ $0 == .integer }):
            // PKCS#1 RSAPrivateKey has 9 INTEGERs; OpenSSL's DSA private key has 6.
            if fields.count >= 9 { throw KeyLoadingError(.rsaKey, source: source, Self.rsaDetail) }
            throw KeyLoadingError(
                .unsupportedAlgorithm,
                source: source,
                "holds a DSA private key; App Store Connect subscription keys are ECDSA P-256"
            )
        default:
            throw KeyLoadingError(.notAKey, source: source, "not a private key: unrecognised ASN.1 structure")
        }
    }

    /// PrivateKeyInfo (RFC 5208): the algorithm OID says what kind of key this is.
    private static func decodePKCS8(algorithm: ASN1Node, privateKey: ASN1Node, source: String) throws(KeyLoadingError) -> P256.Signing.PrivateKey {
        guard case .constructed(let parts) = algorithm.content, let oidNode = Array(parts).first,
            let algorithmOID = oid(oidNode)
        else {
            throw KeyLoadingError(.malformed, source: source, "malformed PKCS#8: no algorithm identifier")
        }
        switch algorithmOID {
        case OID.ecPublicKey:
            break
        case OID.rsaEncryption, OID.rsassaPSS:
            throw KeyLoadingError(.rsaKey, source: source, Self.rsaDetail)
        default:
            let name = OID.algorithmNames[algorithmOID].map { "an \($0)" } ?? "a private key with algorithm OID \(algorithmOID)"
            throw KeyLoadingError(.unsupportedAlgorithm, source: source, "holds \(name); App Store Connect subscription keys are ECDSA P-256")
        }
        var curve: String?
        if let parameters = Array(parts).dropFirst().first {
            curve = try namedCurve(parameters, source: source)
        }
        guard case .primitive(let inner) = privateKey.content else {
            throw KeyLoadingError(.malformed, source: source, "malformed PKCS#8: the private key is not an OCTET STRING")
        }
        let sec1: ASN1Node
        do { sec1 = try BER.parse(inner) } catch {
            throw KeyLoadingError(.malformed, source: source, "malformed PKCS#8: the EC private key inside is not valid DER")
        }
        return try decodeSEC1(sec1, expectedCurve: curve, source: source)
    }

    /// ECPrivateKey (RFC 5915): SEQUENCE { INTEGER 1, OCTET STRING scalar, [0] curve OPTIONAL, [1] public key OPTIONAL }.
    private static func decodeSEC1(_ node: ASN1Node, expectedCurve: String?, source: String) throws(KeyLoadingError) -> P256.Signing.PrivateKey {
        guard node.identifier == .sequence, case .constructed(let collection) = node.content else {
            throw KeyLoadingError(.malformed, source: source, "malformed EC private key: not a SEQUENCE")
        }
        let fields = Array(collection)
        guard fields.count >= 2, fields[0].identifier == .integer, case .primitive(let version) = fields[0].content,
            Array(version) == [1], fields[1].identifier == .octetString, case .primitive(let scalar) = fields[1].content
        else {
            throw KeyLoadingError(.malformed, source: source, "malformed EC private key: expected version 1 and a private scalar")
        }
        var curve = expectedCurve
        var publicKeyBits: ArraySlice<UInt8>?
        for field in fields.dropFirst(2) where field.identifier.tagClass == .contextSpecific {
            guard case .constructed(let wrapped) = field.content, let inner = Array(wrapped).first else { continue }
            if field.identifier.tagNumber == 0 {
                let innerCurve = try namedCurve(inner, source: source)
                if let curve, let innerCurve, curve != innerCurve {
                    throw KeyLoadingError(
                        .malformed,
                        source: source,
                        "malformed key: PKCS#8 names curve \(curveName(curve)) but the EC key inside names \(curveName(innerCurve))"
                    )
                }
                curve = curve ?? innerCurve
            } else if field.identifier.tagNumber == 1, inner.identifier == .bitString, case .primitive(let bits) = inner.content {
                publicKeyBits = bits.dropFirst()  // first byte counts unused bits, 0 for a point
            }
        }
        guard let curve else {
            throw KeyLoadingError(.malformed, source: source, "the EC key does not name its curve; expected P-256 (prime256v1)")
        }
        guard curve == OID.p256 else {
            throw KeyLoadingError(
                .wrongCurve,
                source: source,
                "holds an EC key on curve \(curveName(curve)); App Store Connect subscription keys use P-256 (prime256v1)"
            )
        }
        // RFC 5915 fixes the length at 32 bytes, but some encoders drop leading zero bytes.
        guard !scalar.isEmpty, scalar.count <= 32 else {
            throw KeyLoadingError(.malformed, source: source, "malformed P-256 key: the private scalar is \(scalar.count) bytes, expected 32")
        }
        let raw = [UInt8](repeating: 0, count: 32 - scalar.count) + scalar
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(rawRepresentation: raw) } catch {
            throw KeyLoadingError(.malformed, source: source, "malformed P-256 key: the private scalar is out of range")
        }
        // A public key that does not match means a corrupted or hand-assembled file: signatures would not verify.
        if let publicKeyBits {
            let derived = publicKeyBits.first == 0x04 ? key.publicKey.x963Representation : key.publicKey.compressedRepresentation
            guard Data(publicKeyBits) == derived else {
                throw KeyLoadingError(.malformed, source: source, "malformed P-256 key: the embedded public key does not match the private key")
            }
        }
        return key
    }

    /// The curve OID of EC parameters; `nil` when absent (NULL). Explicit curve parameters are refused.
    private static func namedCurve(_ node: ASN1Node, source: String) throws(KeyLoadingError) -> String? {
        if node.identifier == .null { return nil }
        if let curve = oid(node) { return curve }
        throw KeyLoadingError(
            .wrongCurve,
            source: source,
            "the EC key spells out explicit curve parameters instead of naming P-256 (prime256v1); re-export it with a named curve"
        )
    }

    private static func oid(_ node: ASN1Node) -> String? {
        guard node.identifier == .objectIdentifier,
            let oid = try? ASN1ObjectIdentifier(derEncoded: node, withIdentifier: .objectIdentifier)
        else { return nil }
        return oid.oidComponents.map(String.init).joined(separator: ".")
    }

    private static func curveName(_ oid: String) -> String {
        OID.curveNames[oid].map { "\($0) (\(oid))" } ?? oid
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Object identifiers, in dotted form, that the decoder names in its messages.
    private enum OID {
        static let ecPublicKey = "1.2.840.10045.2.1"
        static let rsaEncryption = "1.2.840.113549.1.1.1"
        static let rsassaPSS = "1.2.840.113549.1.1.10"
        static let p256 = "1.2.840.10045.3.1.7"

        static let algorithmNames: [String: String] = [
            "1.3.101.112": "Ed25519 key",
            "1.3.101.113": "Ed448 key",
            "1.3.101.110": "X25519 key",
            "1.3.101.111": "X448 key",
            "1.2.840.10040.4.1": "DSA key",
            "1.2.840.113549.1.3.1": "DH key",
            "1.2.840.10046.2.1": "X9.42 DH key",
        ]

        static let curveNames: [String: String] = [
            "1.2.840.10045.3.1.7": "P-256 (prime256v1)",
            "1.2.840.10045.3.1.1": "P-192",
            "1.3.132.0.33": "P-224",
            "1.3.132.0.34": "P-384",
            "1.3.132.0.35": "P-521",
            "1.3.132.0.10": "secp256k1",
            "1.3.36.3.3.2.8.1.1.7": "brainpoolP256r1",
            "1.3.36.3.3.2.8.1.1.11": "brainpoolP384r1",
            "1.3.36.3.3.2.8.1.1.13": "brainpoolP512r1",
            "1.2.156.10197.1.301": "SM2",
        ]
    }
}
