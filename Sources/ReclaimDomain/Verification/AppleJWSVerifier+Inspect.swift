import Foundation

extension AppleJWSVerifier {
    /// Verifies any signed payload from Apple and returns its decoded JSON for people to read (`reclaim verify`).
    ///
    /// `input` is a compact JWS or an HTTP body `{"signedPayload": …}`, surrounding whitespace ignored. Works for
    /// notifications, transactions, renewal info and realtime requests. Nested `signedTransactionInfo`,
    /// `signedRenewalInfo` and `signedAppTransactionInfo` are verified too and replaced by their decoded JSON.
    /// Without expectations only chains and signatures are checked (old payloads carry no environment);
    /// with them, every `bundleId` / `environment` in the payload and its nested payloads must equal them, and
    /// at least one must be present.
    ///
    /// - Returns: pretty-printed JSON with sorted keys.
    /// - Throws: ``JWSVerificationError`` or ``AppIdentityError``, whose descriptions are the reason.
    public func inspect(
        _ input: Data,
        expectedBundleId: String? = nil,
        expectedEnvironment: String? = nil
    ) async throws -> Data {
        let jws = try Self.compactJWS(in: input)
        let verified = try await verify(jws)
        var object = try Self.jsonObject(verified.payload, what: "payload")
        var identities = [Identity(object)]

        // Notifications nest signed payloads one level down, in `data` (transactions, renewals) or `appData`.
        for container in ["data", "appData"] {
            guard var body = object[container] as? [String: Any] else { continue }
            identities.append(Identity(body))
            for field in ["signedTransactionInfo", "signedRenewalInfo", "signedAppTransactionInfo"] {
                guard let nestedJWS = body[field] as? String else { continue }
                let nested: VerifiedJWS
                do {
                    nested = try await verify(nestedJWS)
                } catch {
                    throw error.prefixed(field)
                }
                let decoded = try Self.jsonObject(nested.payload, what: field)
                identities.append(Identity(decoded))
                body[field] = decoded
            }
            object[container] = body
        }
        for container in ["summary", "externalPurchaseToken"] {
            if let body = object[container] as? [String: Any] { identities.append(Identity(body)) }
        }

        if let expectedBundleId {
            let found = identities.compactMap(\.bundleId)
            guard !found.isEmpty else {
                throw AppIdentityError(.unknownApp, "the payload carries no bundleId to compare with \(expectedBundleId)")
            }
            if let other = found.first(where: { $0 != expectedBundleId }) {
                throw AppIdentityError(.unknownApp, "bundleId \(other) is not the expected \(expectedBundleId)")
            }
        }
        if let expectedEnvironment {
            let found = identities.compactMap(\.environment)
            guard !found.isEmpty else {
                throw AppIdentityError(.environmentNotAccepted, "the payload names no environment to compare with \(expectedEnvironment)")
            }
            if let other = found.first(where: { $0 != expectedEnvironment }) {
                throw AppIdentityError(.environmentNotAccepted, "environment \(other) is not the expected \(expectedEnvironment)")
            }
        }

        do {
            return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw JWSVerificationError(.malformed, "the payload cannot be printed as JSON")
        }
    }

    /// The bundleId and environment a JSON object names directly, if any.
    private struct Identity {
        let bundleId: String?
        let environment: String?

        init(_ object: [String: Any]) {
            bundleId = object["bundleId"] as? String
            environment = object["environment"] as? String
        }
    }

    /// The compact JWS in a raw JWS or a `{"signedPayload": …}` body.
    static func compactJWS(in input: Data) throws(JWSVerificationError) -> String {
        let text = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        do {
            return try JSONDecoder().decode(SignedPayloadBody.self, from: Data(text.utf8)).signedPayload
        } catch {
            throw JWSVerificationError(.malformed, "the JSON body has no string signedPayload")
        }
    }

    private static func jsonObject(_ data: Data, what: String) throws(JWSVerificationError) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw JWSVerificationError(.malformed, "the \(what) is not a JSON object")
        }
        return object
    }
}
