import Foundation

/// A failed App Store Server API call, in words an operator can act on. Never carries the bearer token.
public struct AppStoreAPIError: Error, CustomStringConvertible, Sendable {
    /// The HTTP status, or nil when no response arrived (connection refused or cut, timeout).
    public let status: Int?
    /// Apple's `errorCode`, when the body carried one.
    public let errorCode: Int64?
    public let description: String

    /// Apple's codes that mean "try again": 4040002 AccountNotFoundRetryable, 4040004 AppNotFoundRetryable,
    /// 4040006 OriginalTransactionIdNotFoundRetryable, 5000001 GeneralInternalRetryable.
    static let retryableCodes: Set<Int64> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]

    /// Whether the request may succeed if sent again.
    var isRetryable: Bool {
        guard let status else { return true }
        if let errorCode, Self.retryableCodes.contains(errorCode) { return true }
        return status == 429 || (500...599).contains(status)
    }

    static func http(status: Int, errorCode: Int64?, message: String?, request: String, app: String, keyId: String) -> AppStoreAPIError {
        let apple = [errorCode.map(AppleErrorCode.describe), message].compactMap { $0 }.joined(separator: ": ")
        let said = apple.isEmpty ? "" : " (Apple: \(apple))"
        let detail: String
        switch status {
        case 401:
            // Apple: "The JSON Web Token (JWT) in the authorization header is invalid."
            detail =
                "\(request): Apple refused the credentials of app \(app) (401)\(said): check serverAPI.keyId (\(keyId)), serverAPI.issuerId and the .p8 file, and that the key is an In-App Purchase key that has not been revoked"
        case 403 where errorCode == nil:
            detail =
                "\(request): Apple forbade it for app \(app) (403): the key \(keyId) is not allowed this request; check that it is an In-App Purchase key of the team that owns the app"
        case 404 where errorCode == 4_040_010:
            detail = "\(request): Apple knows no such transaction in this environment (404)\(said)"
        case 404 where errorCode == nil:
            detail = "\(request): not found (404); check serverAPI.baseURL and the app's bundle id"
        case 429:
            detail = "\(request): Apple's rate limit (429)\(said)"
        default:
            detail = "\(request): Apple answered \(status)\(said)"
        }
        return AppStoreAPIError(status: status, errorCode: errorCode, description: detail)
    }

    /// Whether Apple refused the key itself: nothing else sent with it can succeed.
    public var isCredentialFailure: Bool { status == 401 || (status == 403 && errorCode == nil) }

    /// This error, saying that waiting `wait` more would pass the call's deadline.
    func waited(_ wait: Duration, beyond deadline: Duration) -> AppStoreAPIError {
        AppStoreAPIError(
            status: status,
            errorCode: errorCode,
            description: "\(description); Apple asks to wait \(wait) more, past this call's deadline of \(deadline)"
        )
    }

    static func transport(_ error: any Error, request: String) -> AppStoreAPIError {
        AppStoreAPIError(status: nil, errorCode: nil, description: "\(request): no answer from Apple (\(error))")
    }
}
