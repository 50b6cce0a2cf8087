import SwiftASN1
import X509

/// A chain policy that admits only Apple's App Store signing chains: exactly leaf → intermediate → root,
/// the leaf carrying OID 1.2.840.113635.100.6.11.1 and the intermediate OID 1.2.840.113635.100.6.2.1.
///
/// RFC 5280 alone would accept any certificate a trusted root ever issued (for instance an Apple TLS or
/// developer certificate); the marker extensions narrow trust to the receipt-signing hierarchy, as Apple's
/// own App Store Server Library does.
public struct AppleMarkerExtensionPolicy: VerifierPolicy, Sendable {
    /// Marker of App Store receipt-signing leaf certificates.
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Marker of the Apple Worldwide Developer Relations intermediate.
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    // Both markers are enforced here, so a certificate that marks them critical is still acceptable.
    public let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [leafMarkerOID, intermediateMarkerOID]

    public init() {}

    public func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain has \(chain.count) certificates, Apple's has exactly three")
        }
        if let missing = Self.missingMarker(leaf: chain[0], intermediate: chain[1]) {
            return .failsToMeetPolicy(reason: missing)
        }
        return .meetsPolicy
    }

    /// Which marker is missing, if any; `nil` when both are present.
    static func missingMarker(leaf: Certificate, intermediate: Certificate) -> String? {
        if leaf.extensions[oid: leafMarkerOID] == nil {
            return "leaf certificate lacks Apple's extension \(leafMarkerOID)"
        }
        if intermediate.extensions[oid: intermediateMarkerOID] == nil {
            return "intermediate certificate lacks Apple's extension \(intermediateMarkerOID)"
        }
        return nil
    }
}
