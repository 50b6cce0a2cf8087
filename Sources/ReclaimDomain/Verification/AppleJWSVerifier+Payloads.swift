import Foundation

extension AppleJWSVerifier {
    /// Verifies a notification's `signedPayload` and the nested transaction and renewal JWS it carries,
    /// each at its own `signedDate`, and decodes all three. Every chain must end in a root trusted for the
    /// notification's app.
    public func verifyNotification(_ signedPayload: String) async throws(JWSVerificationError) -> VerifiedNotification {
        let (payload, outer) = try await verifyDecoded(signedPayload, as: NotificationPayload.self, what: "notification payload")
        try requireTrusted(outer, bundleId: payload.bundleId, appAppleId: payload.appAppleId, what: "notification")
        return try await verifyNested(of: payload, payloadJSON: outer.payload)
    }

    /// A notification Reclaim stored after ``verifyNotificationEnvelope(_:)`` verified it: its outer payload, read
    /// back from Reclaim's own database, is decoded without a second signature check; the nested transaction and
    /// renewal info, which ingest did not verify on their own, are verified in full as ``verifyNotification(_:)``
    /// does. The workers use this: one ECDSA verification fewer per notification.
    public func verifyStoredNotification(_ signedPayload: String) async throws(JWSVerificationError) -> VerifiedNotification {
        let (payload, json) = try Self.decodeUnverified(signedPayload, as: NotificationPayload.self, field: "notification payload")
        return try await verifyNested(of: payload, payloadJSON: json)
    }

    /// Verifies and decodes the nested transaction and renewal info of a decoded notification payload, each
    /// chained to a root trusted for the notification's app.
    private func verifyNested(of payload: NotificationPayload, payloadJSON: Data) async throws(JWSVerificationError) -> VerifiedNotification {
        let (bundleId, appAppleId) = (payload.bundleId, payload.appAppleId)
        var result = VerifiedNotification(payload: payload, payloadJSON: payloadJSON)
        if let jws = payload.data?.signedTransactionInfo {
            do {
                let (transaction, verified) = try await verifyDecoded(jws, as: TransactionInfo.self, what: "transaction")
                try requireTrusted(verified, bundleId: bundleId, appAppleId: appAppleId, what: "transaction")
                result.transaction = transaction
                result.transactionJSON = verified.payload
            } catch {
                throw error.prefixed("signedTransactionInfo")
            }
        }
        if let jws = payload.data?.signedRenewalInfo {
            do {
                let (renewalInfo, verified) = try await verifyDecoded(jws, as: RenewalInfo.self, what: "renewal info")
                try requireTrusted(verified, bundleId: bundleId, appAppleId: appAppleId, what: "renewal info")
                result.renewalInfo = renewalInfo
                result.renewalInfoJSON = verified.payload
            } catch {
                throw error.prefixed("signedRenewalInfo")
            }
        }
        // RESCIND_CONSENT: "The data, appData, summary, and externalPurchaseToken fields are mutually exclusive"; appData
        // carries "App transaction information signed by the App Store, in JSON Web Signature (JWS) format."
        if let jws = payload.appData?.signedAppTransactionInfo {
            do {
                let (appTransaction, verified) = try await verifyDecoded(jws, as: AppTransactionInfo.self, what: "app transaction")
                try requireTrusted(verified, bundleId: bundleId, appAppleId: appAppleId, what: "app transaction")
                result.appTransaction = appTransaction
            } catch {
                throw error.prefixed("signedAppTransactionInfo")
            }
        }
        return result
    }

    /// Verifies and decodes a `signedTransactionInfo`; its chain must end in a root trusted for its bundleId.
    public func verifyTransaction(_ signedTransactionInfo: String) async throws(JWSVerificationError) -> TransactionInfo {
        let (transaction, verified) = try await verifyDecoded(signedTransactionInfo, as: TransactionInfo.self, what: "transaction")
        try requireTrusted(verified, bundleId: transaction.bundleId, appAppleId: nil, what: "transaction")
        return transaction
    }

    /// Verifies and decodes a `signedRenewalInfo`. Renewal info names no app: pass the app it belongs to, or its
    /// chain must end in a root trusted for every app (Apple's).
    public func verifyRenewalInfo(_ signedRenewalInfo: String, bundleId: String? = nil) async throws(JWSVerificationError) -> RenewalInfo {
        let (renewalInfo, verified) = try await verifyDecoded(signedRenewalInfo, as: RenewalInfo.self, what: "renewal info")
        try requireTrusted(verified, bundleId: bundleId, appAppleId: nil, what: "renewal info")
        return renewalInfo
    }

    /// Verifies and decodes a Retention Messaging realtime request's `signedPayload`. It carries no bundleId: its
    /// chain must end in a root trusted for the app its appAppleId names.
    public func verifyRealtimeRequest(_ signedPayload: String) async throws(JWSVerificationError) -> RealtimeRequest {
        let (request, verified) = try await verifyDecoded(signedPayload, as: RealtimeRequest.self, what: "realtime request")
        try requireTrusted(verified, bundleId: nil, appAppleId: request.appAppleId, what: "realtime request")
        return request
    }

    /// Verifies a JWS and decodes its payload as `T`; a payload that does not decode is ``JWSVerificationError/Code/malformed``.
    ///
    /// The payload is parsed once, after the chain and the signature verified; the chain's validity is then
    /// checked at the decoded `signedDate`.
    public func verifyDecoded<T: Decodable>(
        _ compactJWS: String,
        as type: T.Type,
        what: String = "payload"
    ) async throws(JWSVerificationError) -> (value: T, verified: VerifiedJWS) {
        let authenticated = try await authenticate(compactJWS)
        let decoded: T
        do {
            decoded = try PayloadDecoder.decode(T.self, from: authenticated.payload)
        } catch {
            throw JWSVerificationError(.malformed, "the \(what) does not decode: \(Self.describe(error))")
        }
        let signedDate = (decoded as? any SignedDateCarrying).map(\.signedDateValue) ?? Self.signedDate(in: authenticated.payload)
        return (decoded, try authenticated.checked(at: signedDate ?? clock()))
    }

    /// A one-line account of a decoding error (the default description is long and nested).
    static func describe(_ error: any Error) -> String {
        if let error = error as? InvalidInput { return error.reason }
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
