import Foundation

extension AppleJWSVerifier {
    /// Verifies a notification's `signedPayload` and the nested transaction and renewal JWS it carries,
    /// each at its own `signedDate`, and decodes all three.
    public func verifyNotification(_ signedPayload: String) async throws(JWSVerificationError) -> VerifiedNotification {
        let (payload, outer) = try await verifyDecoded(signedPayload, as: NotificationPayload.self, what: "notification payload")
        var result = VerifiedNotification(payload: payload, payloadJSON: outer.payload)
        if let jws = payload.data?.signedTransactionInfo {
            do {
                let (transaction, verified) = try await verifyDecoded(jws, as: TransactionInfo.self, what: "transaction")
                result.transaction = transaction
                result.transactionJSON = verified.payload
            } catch {
                throw error.prefixed("signedTransactionInfo")
            }
        }
        if let jws = payload.data?.signedRenewalInfo {
            do {
                let (renewalInfo, verified) = try await verifyDecoded(jws, as: RenewalInfo.self, what: "renewal info")
                result.renewalInfo = renewalInfo
                result.renewalInfoJSON = verified.payload
            } catch {
                throw error.prefixed("signedRenewalInfo")
            }
        }
        return result
    }

    /// Verifies and decodes a `signedTransactionInfo`.
    public func verifyTransaction(_ signedTransactionInfo: String) async throws(JWSVerificationError) -> TransactionInfo {
        try await verifyDecoded(signedTransactionInfo, as: TransactionInfo.self, what: "transaction").value
    }

    /// Verifies and decodes a `signedRenewalInfo`.
    public func verifyRenewalInfo(_ signedRenewalInfo: String) async throws(JWSVerificationError) -> RenewalInfo {
        try await verifyDecoded(signedRenewalInfo, as: RenewalInfo.self, what: "renewal info").value
    }

    /// Verifies and decodes a Retention Messaging realtime request's `signedPayload`.
    public func verifyRealtimeRequest(_ signedPayload: String) async throws(JWSVerificationError) -> RealtimeRequest {
        try await verifyDecoded(signedPayload, as: RealtimeRequest.self, what: "realtime request").value
    }

    /// Verifies a JWS and decodes its payload as `T`; a payload that does not decode is ``JWSVerificationError/Code/malformed``.
    public func verifyDecoded<T: Decodable>(
        _ compactJWS: String,
        as type: T.Type,
        what: String = "payload"
    ) async throws(JWSVerificationError) -> (value: T, verified: VerifiedJWS) {
        // Decoded while the chain's validation time is chosen, so the payload is parsed once; the value is only
        // returned after the signature verified.
        var decoded: T?
        let verified = try await verify(compactJWS) { payload in
            decoded = try? PayloadDecoder.decode(T.self, from: payload)
            if let carrier = decoded as? any SignedDateCarrying { return carrier.signedDateValue }
            return Self.signedDate(in: payload)
        }
        if let decoded { return (decoded, verified) }
        do {
            return (try PayloadDecoder.decode(T.self, from: verified.payload), verified)
        } catch {
            throw JWSVerificationError(.malformed, "the \(what) does not decode: \(Self.describe(error))")
        }
    }

    /// A one-line account of a decoding error (the default description is long and nested).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not valid JSON" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing \(([path(context)] + [key.stringValue]).filter { !$0.isEmpty }.joined(separator: "."))"
        case .typeMismatch(let type, let context):
            return "\(path(context)) is not \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context)) is null, expected \(type)"
        case .dataCorrupted(let context):
            return path(context).isEmpty ? "not valid JSON" : "\(path(context)) is invalid"
        @unknown default:
            return "not valid JSON"
        }
    }
}
