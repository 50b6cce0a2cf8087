/// An app Reclaim accepts signed payloads for, as configured.
public struct AppIdentity: Sendable, Equatable, Hashable {
    public var bundleId: String
    /// Apple's numeric app id; required for Production, where every payload carries it.
    public var appAppleId: Int64?
    /// Accepted environment names, e.g. ["Production", "Sandbox"].
    public var environments: Set<String>

    public init(bundleId: String, appAppleId: Int64? = nil, environments: Set<String>) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
    }
}

/// Finds the configured app a verified notification is for, refusing unknown apps, unaccepted environments and,
/// in Production, a missing or different appAppleId (the bundle id alone could be reused by another developer's
/// app in Sandbox, but a Production appAppleId is unique).
@discardableResult
public func checkIdentity(of notification: NotificationPayload, apps: [AppIdentity]) throws(AppIdentityError) -> AppIdentity {
    guard let bundleId = notification.bundleId else {
        throw AppIdentityError(.unknownApp, "the notification carries no bundleId")
    }
    guard let app = apps.first(where: { $0.bundleId == bundleId }) else {
        throw AppIdentityError(.unknownApp, "bundleId \(bundleId) is not a configured app")
    }
    guard let environment = notification.environment else {
        throw AppIdentityError(.environmentNotAccepted, "the notification names no environment")
    }
    try checkEnvironmentAndAppAppleId(
        app: app,
        environment: environment,
        appAppleId: notification.appAppleId,
        subject: "bundleId \(bundleId)"
    )
    return app
}

/// ``checkIdentity(of:apps:)`` for the outer payload, plus ``checkConsistency(of:)`` of the nested JWS.
@discardableResult
public func checkIdentity(of notification: VerifiedNotification, apps: [AppIdentity]) throws(AppIdentityError) -> AppIdentity {
    let app = try checkIdentity(of: notification.payload, apps: apps)
    try checkConsistency(of: notification)
    return app
}

/// Checks that the nested transaction and renewal info belong to the notification: same bundle id and environment,
/// and the same subscription. Each is signed by Apple, but a notification could be assembled from another app's parts.
public func checkConsistency(of notification: VerifiedNotification) throws(AppIdentityError) {
    let outer = notification.payload
    if let transaction = notification.transaction {
        if let inner = transaction.bundleId, let bundleId = outer.bundleId, inner != bundleId {
            throw AppIdentityError(.inconsistentPayload, "the transaction's bundleId \(inner) differs from the notification's \(bundleId)")
        }
        if let inner = transaction.environment, let environment = outer.environment, inner != environment {
            throw AppIdentityError(.inconsistentPayload, "the transaction's environment \(inner) differs from the notification's \(environment)")
        }
    }
    if let renewal = notification.renewalInfo {
        if let inner = renewal.environment, let environment = outer.environment, inner != environment {
            throw AppIdentityError(.inconsistentPayload, "the renewal info's environment \(inner) differs from the notification's \(environment)")
        }
        if let inner = renewal.originalTransactionId, let original = notification.transaction?.originalTransactionId, inner != original {
            throw AppIdentityError(
                .inconsistentPayload,
                "the renewal info's originalTransactionId \(inner) differs from the transaction's \(original)"
            )
        }
    }
}

/// Finds the configured app a realtime request is for. A realtime request has no bundleId, so the app is matched by
/// appAppleId; when none matches Reclaim must not answer with an offer.
@discardableResult
public func checkIdentity(of request: RealtimeRequest, apps: [AppIdentity]) throws(AppIdentityError) -> AppIdentity {
    let candidates = apps.filter { $0.appAppleId == request.appAppleId }
    guard !candidates.isEmpty else {
        throw AppIdentityError(.unknownApp, "appAppleId \(request.appAppleId) is not a configured app")
    }
    guard let app = candidates.first(where: { $0.environments.contains(request.environment.rawValue) }) else {
        throw AppIdentityError(.environmentNotAccepted, "appAppleId \(request.appAppleId) does not accept environment \(request.environment)")
    }
    return app
}

private func checkEnvironmentAndAppAppleId(
    app: AppIdentity,
    environment: AppStoreEnvironment,
    appAppleId: Int64?,
    subject: String
) throws(AppIdentityError) {
    guard app.environments.contains(environment.rawValue) else {
        throw AppIdentityError(.environmentNotAccepted, "\(subject) does not accept environment \(environment)")
    }
    if environment == .production {
        guard let configured = app.appAppleId else {
            throw AppIdentityError(.wrongAppAppleId, "\(subject) has no appAppleId configured, which Production requires")
        }
        guard appAppleId == configured else {
            throw AppIdentityError(
                .wrongAppAppleId,
                "appAppleId \(appAppleId.map(String.init) ?? "none") is not the configured \(configured) of \(subject)"
            )
        }
    } else if let configured = app.appAppleId, let appAppleId, appAppleId != configured {
        // Outside Production the id may be absent, but when both sides have one they must agree.
        throw AppIdentityError(.wrongAppAppleId, "appAppleId \(appAppleId) is not the configured \(configured) of \(subject)")
    }
}
