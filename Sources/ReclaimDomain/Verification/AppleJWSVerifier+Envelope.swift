import Foundation

extension AppleJWSVerifier {
    /// Verifies a notification's outer `signedPayload` (chain and signature) and decodes the nested
    /// transaction and renewal info without checking their own signatures.
    ///
    /// This is what ingest needs to store a notification durably and fast: the outer signature
    /// covers the nested JWS text byte for byte, so the nested payloads are as authentic as the
    /// outer one. Their own chains and signatures are still checked, with `verifyNotification`,
    /// by the worker before anything acts on them (docs/architecture.md, Flow). One ECDSA
    /// verification per notification instead of three.
    ///
    /// The nested payloads are decoded only as far as ingest reads them: the identity fields it
    /// stores as columns and cross-checks against the outer payload (``NestedIdentity``); every
    /// other field is nil here, and their JSON is kept whole. Decoding all of their fields cost
    /// about as much as the outer signature's verification (perf, `scripts/bench ingest`).
    public func verifyNotificationEnvelope(_ signedPayload: String) async throws(JWSVerificationError) -> VerifiedNotification {
        let (payload, outer) = try await verifyDecoded(signedPayload, as: NotificationPayload.self, what: "notification payload")
        try requireTrusted(outer, bundleId: payload.bundleId, appAppleId: payload.appAppleId, what: "notification")
        var result = VerifiedNotification(payload: payload, payloadJSON: outer.payload)
        if let jws = payload.data?.signedTransactionInfo {
            let (identity, json) = try Self.decodeUnverified(jws, as: NestedIdentity.self, field: "signedTransactionInfo")
            (result.transaction, result.transactionJSON) = (identity.transaction, json)
        }
        if let jws = payload.data?.signedRenewalInfo {
            let (identity, json) = try Self.decodeUnverified(jws, as: NestedIdentity.self, field: "signedRenewalInfo")
            (result.renewalInfo, result.renewalInfoJSON) = (identity.renewalInfo, json)
        }
        return result
    }

    /// The fields of a nested transaction or renewal info that ingest stores and cross-checks.
    /// Renewal info has no transactionId or bundleId; they stay nil for it.
    struct NestedIdentity: Decodable {
        var originalTransactionId: String?
        var transactionId: String?
        var bundleId: String?
        var productId: String?
        var appAccountToken: String?
        var environment: AppStoreEnvironment?

        /// A transaction with these fields and every other one nil.
        var transaction: TransactionInfo {
            TransactionInfo(
                originalTransactionId: originalTransactionId,
                transactionId: transactionId,
                bundleId: bundleId,
                productId: productId,
                appAccountToken: appAccountToken,
                environment: environment
            )
        }

        /// Renewal info with these fields and every other one nil.
        var renewalInfo: RenewalInfo {
            RenewalInfo(
                originalTransactionId: originalTransactionId,
                productId: productId,
                environment: environment,
                appAccountToken: appAccountToken
            )
        }
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
            return (try PayloadDecoder.decode(T.self, from: payload), payload)
        } catch {
            throw JWSVerificationError(.malformed, "\(field): the payload does not decode: \(describe(error))")
        }
    }
}
