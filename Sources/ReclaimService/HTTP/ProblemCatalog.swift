import HTTPTypes

/// Every problem type Reclaim answers with: the one place each slug, its status and its title are written.
///
/// A ``Problem`` is made from one of these and a `detail`, so no other file can invent a type; openapi.yaml lists
/// the same types under the Problem schema's `x-problem-types` (a test holds the two equal). A slug never
/// changes once released: clients branch on it, and the ingest refusals' slugs are also the `problem` column of
/// `reclaim.rejected_inputs` and the label of `reclaim_notifications_rejected_total`.
public enum ProblemType: String, CaseIterable, Sendable {
    // The request as HTTP: routing, headers, bodies.
    case badRequest = "bad-request"
    case malformedRequest = "malformed-request"
    case notFound = "not-found"
    case methodNotAllowed = "method-not-allowed"
    case bodyTooLarge = "body-too-large"
    case unsupportedMediaType = "unsupported-media-type"
    case invalidText = "invalid-text"
    case forwardedForTooLong = "forwarded-for-too-long"
    case forwardedForUnreadable = "forwarded-for-unreadable"

    // Who is calling, and how often.
    case unauthorized = "unauthorized"
    case invalidUserToken = "invalid-user-token"
    /// A key that authenticates, but whose role may not use the route (a support or privacy key on the admin API).
    case forbidden = "forbidden"
    case rateLimited = "rate-limited"

    // Apple's signed payloads: notifications and Retention Messaging (IngestRefusal).
    case malformedBody = "malformed-body"
    case malformedJWS = "malformed-jws"
    case unsupportedAlgorithm = "unsupported-algorithm"
    case invalidSignature = "invalid-signature"
    case untrustedCertificateChain = "untrusted-certificate-chain"
    case unknownApp = "unknown-app"
    case wrongAppAppleId = "wrong-app-apple-id"
    case environmentNotAccepted = "environment-not-accepted"
    case inconsistentPayload = "inconsistent-payload"
    case invalidNotification = "invalid-notification"
    case serverBusy = "server-busy"

    // The delivery API.
    case missingParameter = "missing-parameter"
    case invalidParameter = "invalid-parameter"
    case invalidBody = "invalid-body"
    case invalidTransaction = "invalid-transaction"
    case invalidEvent = "invalid-event"

    // Grants.
    case missingIdempotencyKey = "missing-idempotency-key"
    case invalidGrant = "invalid-grant"
    case notEligible = "not-eligible"
    case idempotencyKeyReused = "idempotency-key-reused"
    case appWithoutSigningKey = "app-without-signing-key"
    case discountBudgetSpent = "discount-budget-spent"
    /// The app is stopped (`reclaim stop`): nothing is granted until it is resumed.
    case appStopped = "app-stopped"

    // The server itself.
    case databaseUnavailable = "database-unavailable"
    case internalError = "internal-error"
    case starting = "starting"
    case stalled = "stalled"
    case notReady = "not-ready"

    /// The status and title of each type: one row per type, so the compiler asks for one when a type is added.
    private var definition: (status: HTTPResponse.Status, title: String) {
        switch self {
        case .badRequest: (.badRequest, "Bad request")
        case .malformedRequest: (.badRequest, "Bad request")
        case .notFound: (.notFound, "Not found")
        case .methodNotAllowed: (.methodNotAllowed, "Method not allowed")
        case .bodyTooLarge: (.contentTooLarge, "Body too large")
        case .unsupportedMediaType: (.unsupportedMediaType, "Unsupported media type")
        case .invalidText: (.badRequest, "Bad request")
        case .forwardedForTooLong: (.requestHeaderFieldsTooLarge, "Request header fields too large")
        case .forwardedForUnreadable: (.badRequest, "Bad request")

        case .unauthorized: (.unauthorized, "Unauthorized")
        case .invalidUserToken: (.unauthorized, "Unauthorized")
        case .forbidden: (.forbidden, "Forbidden")
        case .rateLimited: (.tooManyRequests, "Too many requests")

        case .malformedBody: (.badRequest, "Bad request")
        case .malformedJWS: (.badRequest, "Bad request")
        case .unsupportedAlgorithm: (.unauthorized, "Unsupported algorithm")
        case .invalidSignature: (.unauthorized, "Invalid signature")
        case .untrustedCertificateChain: (.unauthorized, "Untrusted certificate chain")
        case .unknownApp: (.forbidden, "Unknown app")
        case .wrongAppAppleId: (.forbidden, "Wrong appAppleId")
        case .environmentNotAccepted: (.unprocessableContent, "Environment not accepted")
        case .inconsistentPayload: (.unprocessableContent, "Inconsistent payload")
        case .invalidNotification: (.unprocessableContent, "Invalid notification")
        case .serverBusy: (.serviceUnavailable, "Service busy")

        case .missingParameter: (.badRequest, "Bad request")
        case .invalidParameter: (.badRequest, "Bad request")
        case .invalidBody: (.badRequest, "Bad request")
        case .invalidTransaction: (.unauthorized, "Unauthorized")
        case .invalidEvent: (.badRequest, "Bad request")

        case .missingIdempotencyKey: (.badRequest, "Bad request")
        case .invalidGrant: (.badRequest, "Bad request")
        case .notEligible: (.unprocessableContent, "Not eligible")
        case .idempotencyKeyReused: (.unprocessableContent, "Idempotency key reused")
        case .appWithoutSigningKey: (.unprocessableContent, "App without signing key")
        case .discountBudgetSpent: (.unprocessableContent, "Discount budget spent")
        case .appStopped: (.conflict, "App stopped")

        case .databaseUnavailable: (.serviceUnavailable, "Service unavailable")
        case .internalError: (.internalServerError, "Internal error")
        case .starting: (.serviceUnavailable, "Starting")
        case .stalled: (.serviceUnavailable, "Stalled")
        case .notReady: (.serviceUnavailable, "Not ready")
        }
    }

    /// Short and stable, e.g. `invalid-signature`.
    public var slug: String { rawValue }
    public var status: HTTPResponse.Status { definition.status }
    public var title: String { definition.title }
    /// The problem's `type`, as clients see it: `urn:reclaim:problem:<slug>`.
    public var uri: String { "urn:reclaim:problem:\(rawValue)" }
}
