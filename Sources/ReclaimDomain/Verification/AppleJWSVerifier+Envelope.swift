import Foundation

extension AppleJWSVerifier {
    /// Verifies a notification's outer `signedPayload` (chain and signature) and decodes the nested
    /// transaction and renewal info without checking their own signatures.
    ///
    /// This is what ingest needs to store a notification durably and fast: the outer signature
    /// covers the nested JWS text byte for byte, so the nested payloads are as authentic as the
    /// outer one. Their own chains and signatures are still checked, with `verifyNotification`,
    /// by the worker before anything acts on them (DESIGN.md, worker step 1). One ECDSA
    /// verification per notification instead of three.
    public func verifyNotificationEnvelope(_ signedPayload: String) async throws(JWSVerificationError) -> VerifiedNotification {
        let (payload, outer) = try await verifyDecoded(signedPayload, as: NotificationPayload.self, what: "notification payload")
        var result = VerifiedNotification(payload: payload, payloadJSON: outer.payload)
        if let jws = payload.data?.signedTransactionInfo {
            (result.transaction, result.transactionJSON) = try Self.decodeUnverified(jws, as: TransactionInfo.self, field: "signedTransactionInfo")
        }
        if let jws = payload.data?.signedRenewalInfo {
            (result.renewalInfo, result.renewalInfoJSON) = try Self.decodeUnverified(jws, as: RenewalInfo.self, field: "signedRenewalInfo")
        }
        return result
    }

    /// The payload of a compact JWS whose bytes are already authenticated by an enclosing signature.
    static func decodeUnverified<T: Decodable>(_ compactJWS: String, as type: T.Type, field: String) throws(JWSVerificationError) -> (T, Data) {
        let payload: Data
        do {
            payload = try JWSSegmentDecoder.decodePayload(compactJWS)
        } catch {
            throw error.prefixed(field)
        }
        do {
            return (try JSONDecoder().decode(T.self, from: payload), payload)
        } catch {
            throw JWSVerificationError(.malformed, "\(field): the payload does not decode: \(describe(error))")
        }
    }
}
