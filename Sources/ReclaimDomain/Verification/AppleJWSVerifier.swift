import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies the compact JWS that Apple signs: App Store Server Notifications V2, signed transaction and
/// renewal info, and Retention Messaging realtime requests.
///
/// A JWS is accepted only when
/// - it has three non-empty base64url segments and its header says `"alg":"ES256"` (nothing else, so no
///   algorithm confusion with "none" or HMAC);
/// - its `x5c` holds exactly three standard-base64 DER certificates, and leaf → intermediate chains to one of
///   the trusted roots under RFC 5280 plus ``AppleMarkerExtensionPolicy``. The third `x5c` certificate is never
///   trusted: a self-made CA copying Apple's subject fails;
/// - the ES256 signature (raw r‖s) over `header.payload` verifies with the leaf's P-256 key;
/// - only then is the payload parsed, for its `signedDate`, and every certificate of the chain must be valid at
///   that time (what Apple's library does without online checks; old payloads stay verifiable after the leaf
///   expires). No byte of the payload reaches a parser before the signature over it verified.
/// - the functions that know the payload's app (``verifyNotification(_:)`` and the others) also require the
///   chain's root to be trusted for that app (``RootTrust``).
///
/// Validated chains, and the exact headers that carried them, are cached once a JWS fully verified (see
/// `VerifiedChainCache`), so the steady state is one ECDSA verification per JWS: no chain build, no header parse.
/// Pure: no I/O; the clock is injected and only used for payloads without `signedDate`.
public final class AppleJWSVerifier: Sendable {
    /// "Apple Root CA - G3", parsed from the embedded PEM.
    public static let appleRootCAG3: Certificate = {
        // The PEM is a constant checked by a test (fingerprint); failing here is a build defect, not an input error.
        do {
            return try Certificate(pemEncoded: AppleRootCertificates.appleRootCAG3PEM)
        } catch {
            fatalError("embedded Apple Root CA - G3 does not parse: \(error)")
        }
    }()

    /// The roots a chain must end in. The `x5c` root is not among them unless configured.
    public var trustedRoots: [Certificate] { trust.anchors }
    /// Which of those roots may vouch for which app.
    public let trust: RootTrust
    private let rootStore: CertificateStore
    let clock: @Sendable () -> Date
    private let cache: VerifiedChainCache

    /// - Parameters:
    ///   - trustedRoots: the only anchors, each trusted for every app; defaults to Apple Root CA - G3. Tests pass their own CA.
    ///   - chainCacheCapacity: how many distinct validated chains to remember (0 disables the cache).
    ///   - clock: the time used for payloads that carry no `signedDate`.
    public convenience init(
        trustedRoots: [Certificate] = [AppleJWSVerifier.appleRootCAG3],
        chainCacheCapacity: Int = 256,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(trust: RootTrust(everyApp: trustedRoots), chainCacheCapacity: chainCacheCapacity, clock: clock)
    }

    /// - Parameter trust: the anchors and which app each may vouch for.
    public init(trust: RootTrust, chainCacheCapacity: Int = 256, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.trust = trust
        self.rootStore = CertificateStore(trust.anchors)
        self.clock = clock
        self.cache = VerifiedChainCache(capacity: chainCacheCapacity)
    }

    /// Throws unless the root `verified` chains to may vouch for the named app (``RootTrust``).
    public func requireTrusted(_ verified: VerifiedJWS, bundleId: String?, appAppleId: Int64?, what: String) throws(JWSVerificationError) {
        guard trust.allows(verified.anchor, bundleId: bundleId, appAppleId: appAppleId) else {
            let app = bundleId ?? appAppleId.map { "appAppleId \($0)" } ?? "no app"
            throw JWSVerificationError(
                .invalidChain,
                "the \(what)'s certificate chain ends in a root configured for another app, not trusted for \(app)"
            )
        }
    }

    /// Parses every certificate of a PEM text (one or more `BEGIN CERTIFICATE` blocks), e.g. an operator's extra root.
    public static func certificates(fromPEM pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).map { try Certificate(pemDocument: $0) }
    }

    /// Distinct validated chains currently cached.
    public var cachedChainCount: Int { cache.count }

    /// Full chain validations run so far (cache misses); for tests and metrics.
    public var chainValidationCount: Int { cache.validationCount }

    // MARK: - Core

    /// Verifies a compact JWS, checking the chain at its payload's `signedDate` (the clock if it has none).
    public func verify(_ compactJWS: String) async throws(JWSVerificationError) -> VerifiedJWS {
        try await verify(compactJWS, validationTime: Self.signedDate(in:))
    }

    /// Verifies a compact JWS, checking the chain at `validationTime(payload)`, or at the clock's time when that is `nil`.
    ///
    /// `validationTime` runs only once the chain and the signature verified: it parses authenticated bytes.
    public func verify(
        _ compactJWS: String,
        validationTime: (Data) -> Date?
    ) async throws(JWSVerificationError) -> VerifiedJWS {
        let authenticated = try await authenticate(compactJWS)
        return try authenticated.checked(at: validationTime(authenticated.payload) ?? clock())
    }

    /// A JWS whose chain (up to a trusted root, without regard to time) and signature verified; its payload has
    /// not been parsed yet. ``checked(at:)`` adds the time check once the payload told its signedDate.
    struct Authenticated {
        let header: JWSHeader
        let payload: Data
        let chain: VerifiedChainCache.Chain

        func checked(at time: Date) throws(JWSVerificationError) -> VerifiedJWS {
            guard chain.isValid(at: time) else {
                throw JWSVerificationError(
                    .chainExpired,
                    "the certificate chain is valid from \(chain.notValidBefore) to \(chain.notValidAfter), not at the payload's signedDate \(time)"
                )
            }
            return VerifiedJWS(header: header, payload: payload, validationTime: time, anchor: chain.anchor)
        }
    }

    /// Checks structure, header, chain and signature; parses nothing of the payload.
    func authenticate(_ compactJWS: String) async throws(JWSVerificationError) -> Authenticated {
        let segments = try JWSSegmentDecoder.decode(compactJWS)
        let known = cache.header(segments.headerSegment)
        let header: JWSHeader
        if let known {
            header = known.header
        } else {
            header = try Self.parseHeader(segments.headerSegment)
        }
        // JWS ES256 signatures are the raw 32-byte r and s, not DER (RFC 7518 §3.4).
        guard segments.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: segments.signature)
        else {
            throw JWSVerificationError(.invalidSignature, "an ES256 signature is 64 bytes (r‖s), got \(segments.signature.count)")
        }

        let chainKey = known?.chainKey ?? VerifiedChainCache.key(for: header.x5c)
        let cachedChain = cache.chain(chainKey)
        let chain: VerifiedChainCache.Chain
        if let cachedChain {
            chain = cachedChain
        } else {
            chain = try await validateChain(header.x5c)
        }

        guard chain.leafKey.isValidSignature(signature, for: segments.signingInputDigest) else {
            throw JWSVerificationError(.invalidSignature, "the ES256 signature does not verify with the leaf certificate's key")
        }
        // After the signature: these bytes are now Apple's (the claims are judged at the clock's time, as PyJWT does).
        try RegisteredClaims.check(segments.payload, now: clock())
        // Remembered only now, once the signature verified: forged JWS with Apple's chain cannot churn the cache.
        if known == nil || cachedChain == nil {
            cache.remember(
                header: VerifiedChainCache.Header(header: header, chainKey: chainKey),
                segment: segments.headerSegment,
                chain: cachedChain == nil ? chain : nil
            )
        }
        return Authenticated(header: header, payload: segments.payload, chain: chain)
    }

    /// The payload's `signedDate` (UNIX milliseconds) as a date, or `nil` when it has none or is not JSON.
    public static func signedDate(in payload: Data) -> Date? {
        guard let probe = try? PayloadDecoder.decode(SignedDateProbe.self, from: payload),
            let milliseconds = probe.signedDate
        else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private struct SignedDateProbe: Decodable {
        let signedDate: Int64?
    }

    private struct RawHeader: Decodable {
        let alg: String?
        let x5c: [String]?
        let kid: String?
        let typ: String?
        let crit: [String]?
    }

    private static func parseHeader(_ segment: Data) throws(JWSVerificationError) -> JWSHeader {
        guard let bytes = JWSSegmentDecoder.decodeBase64URL(segment) else {
            throw JWSVerificationError(.malformed, "the header segment is not base64url")
        }
        let raw: RawHeader
        do {
            raw = try JSONDecoder().decode(RawHeader.self, from: bytes)
        } catch {
            throw JWSVerificationError(.malformed, "the header is not a JSON object with string alg and x5c")
        }
        // Checked before anything else in the header: the algorithm is fixed, never chosen by the sender.
        guard let alg = raw.alg else {
            throw JWSVerificationError(.unsupportedAlgorithm, "the header has no alg; only ES256 is accepted")
        }
        guard alg == "ES256" else {
            throw JWSVerificationError(
                .unsupportedAlgorithm,
                "alg \"\(LogText.bounded(alg, limit: LogText.echoLimit))\" is not accepted; only ES256 is"
            )
        }
        // RFC 7515 §4.1.11: a recipient must refuse critical parameters it does not understand, and it understands none.
        if let crit = raw.crit {
            throw JWSVerificationError(
                .malformed,
                "the header marks \(LogText.bounded("\(crit)", limit: LogText.echoLimit)) critical; no critical parameter is supported"
            )
        }
        guard let x5c = raw.x5c else {
            throw JWSVerificationError(.invalidChain, "the header has no x5c certificate chain")
        }
        guard x5c.count == 3 else {
            throw JWSVerificationError(.invalidChain, "x5c holds \(x5c.count) certificates; Apple's chain has exactly 3")
        }
        var ders: [Data] = []
        for (index, text) in x5c.enumerated() {
            // x5c is standard base64 with padding (RFC 7515 §4.1.6), unlike the JWS segments.
            guard let der = Data(base64Encoded: text), !der.isEmpty else {
                throw JWSVerificationError(.invalidCertificate, "x5c[\(index)] is not standard base64")
            }
            ders.append(der)
        }
        return JWSHeader(alg: alg, x5c: ders, kid: raw.kid, typ: raw.typ)
    }

    // MARK: - Chain

    /// Validates leaf → intermediate → trusted root once, at a moment when all three are valid;
    /// the caller checks the payload's own time against the window this returns. Every RFC 5280 check but validity
    /// is time-independent, so this equals validating at the payload's time whenever that lies in the window.
    private func validateChain(_ x5c: [Data]) async throws(JWSVerificationError) -> VerifiedChainCache.Chain {
        cache.recordValidation()
        var certificates: [Certificate] = []
        for (index, der) in x5c.enumerated() {
            do {
                certificates.append(try Certificate(derEncoded: Array(der)))
            } catch {
                throw JWSVerificationError(.invalidCertificate, "x5c[\(index)] is not a DER X.509 certificate")
            }
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw JWSVerificationError(.invalidCertificate, "the leaf certificate's key is not P-256, which ES256 needs")
        }

        let start = max(leaf.notValidBefore, intermediate.notValidBefore)
        let end = min(leaf.notValidAfter, intermediate.notValidAfter)
        guard start <= end else {
            throw JWSVerificationError(
                .chainExpired,
                "the leaf (valid \(leaf.notValidBefore) to \(leaf.notValidAfter)) and the intermediate (valid "
                    + "\(intermediate.notValidBefore) to \(intermediate.notValidAfter)) are never valid at the same time"
            )
        }
        if let missing = AppleMarkerExtensionPolicy.missingMarker(leaf: leaf, intermediate: intermediate) {
            throw JWSVerificationError(.missingAppleExtension, missing)
        }

        // The moment must be one when the root is valid too: a root the operator added may be younger than the chain
        // it signed (a re-issued root), and validating before its notBefore would refuse a chain valid at signedDate.
        // So the start of the window is tried first, then each later notBefore of a trusted root of the
        // intermediate's issuer name (several roots may share it: Apple's and a look-alike); the path builder decides
        // which root vouches. Runs only when a chain is not cached.
        let rootStarts = trust.anchors.filter { $0.subject == intermediate.issuer }.map(\.notValidBefore).filter { $0 > start && $0 <= end }
        var firstFailure: JWSVerificationError?
        for time in [start] + Set(rootStarts).sorted() {
            var verifier = Verifier(rootCertificates: rootStore) {
                RFC5280Policy(fixedExpiryValidationTime: time)
                AppleMarkerExtensionPolicy()
            }
            // Only the intermediate is offered: the x5c root is never a trust anchor nor a path element.
            let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
            switch result {
            case .validCertificate(let chain):
                let validated = Array(chain)
                return VerifiedChainCache.Chain(
                    leafKey: leafKey,
                    notValidBefore: validated.map(\.notValidBefore).max() ?? time,
                    notValidAfter: validated.map(\.notValidAfter).min() ?? time,
                    anchor: validated.last.map(RootTrust.fingerprint) ?? Data()
                )
            case .couldNotValidate(let failures):
                let details =
                    failures.isEmpty
                    ? "no path from the leaf through the x5c intermediate to a trusted root (intermediate issuer \(intermediate.issuer))"
                    : failures.map { $0.policyFailureReason.description }.joined(separator: "; ")
                firstFailure = firstFailure ?? JWSVerificationError(.invalidChain, "the certificate chain does not validate: \(details)")
            }
        }
        throw firstFailure ?? JWSVerificationError(.invalidChain, "the certificate chain does not validate")
    }
}
