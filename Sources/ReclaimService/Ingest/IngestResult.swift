import ReclaimDomain

/// What ingest did with one signed notification: stored it (with its processing job), found it stored already
/// (Apple retries with the same notificationUUID), or refused it, saying why. Only the HTTP route turns a
/// refusal into problem+json (``Problem/init(_:)-IngestRefusal``); reconcile counts it.
public enum IngestResult: Sendable, Equatable {
    case stored
    case duplicate
    case refused(IngestRefusal)
}

/// Why ingest refused a notification. Each reason is answered as a problem type of the catalog
/// (``IngestRefusal/Reason/problemType``), whose slug is also the `problem` column of `reclaim.rejected_inputs`
/// and the label of `reclaim_notifications_rejected_total`.
public struct IngestRefusal: Error, Sendable, Equatable {
    public enum Reason: Sendable {
        /// Not JSON of the form `{"signedPayload": "<JWS>"}`.
        case malformedBody
        case malformedJWS
        case unsupportedAlgorithm
        case invalidSignature
        case untrustedCertificateChain
        case unknownApp
        case wrongAppAppleId
        case environmentNotAccepted
        case inconsistentPayload
        /// Verified, but without what Reclaim stores it by (a UUID notificationUUID, bundleId, environment).
        case invalidNotification
    }

    public let reason: Reason
    /// In words, for the log, the record and the problem's `detail`.
    public let detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// A signed payload that did not verify.
    public init(_ error: JWSVerificationError) {
        switch error.code {
        case .malformed: self.init(.malformedJWS, error.reason)
        case .unsupportedAlgorithm: self.init(.unsupportedAlgorithm, error.reason)
        case .invalidSignature: self.init(.invalidSignature, error.reason)
        case .invalidCertificate, .invalidChain, .missingAppleExtension, .chainExpired: self.init(.untrustedCertificateChain, error.reason)
        }
    }

    /// A verified payload that is not for a configured app, or not as that app's.
    public init(_ error: AppIdentityError) {
        switch error.code {
        case .unknownApp: self.init(.unknownApp, error.reason)
        case .wrongAppAppleId: self.init(.wrongAppAppleId, error.reason)
        case .environmentNotAccepted: self.init(.environmentNotAccepted, error.reason)
        case .inconsistentPayload: self.init(.inconsistentPayload, error.reason)
        }
    }
}

/// A genuine notification that could not be stored now: nothing was acknowledged, and Apple retries.
public enum IngestUnavailable: Error, Sendable, Equatable {
    /// Too many notifications wait for the database (`server.maxPendingNotifications`).
    case busy
    /// The database did not take it.
    case database
}
