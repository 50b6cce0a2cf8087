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

    static func http(status: Int, errorCode: Int64?, message: String?, request: String, app: String) -> AppStoreAPIError {
        let apple = [errorCode.map { "errorCode \($0)" }, message].compactMap { $0 }.joined(separator: ": ")
        let said = apple.isEmpty ? "" : " (Apple: \(apple))"
        let detail: String
        switch status {
        case 401:
            detail =
                "Apple refused the credentials of app \(app) (401)\(said): check serverAPI.keyId, serverAPI.issuerId and the .p8 file, and that the key is an In-App Purchase key that has not been revoked"
        case 404 where errorCode == 4_040_010:
            detail = "\(request): Apple knows no such transaction in this environment (404)\(said)"
        case 404:
            detail = "\(request): not found (404)\(said); check serverAPI.baseURL and the app's bundle id"
        case 429:
            detail = "\(request): Apple's rate limit (429)\(said)"
        default:
            detail = "\(request): Apple answered \(status)\(said)"
        }
        return AppStoreAPIError(status: status, errorCode: errorCode, description: detail)
    }

    static func transport(_ error: any Error, request: String) -> AppStoreAPIError {
        AppStoreAPIError(status: nil, errorCode: nil, description: "\(request): no answer from Apple (\(error))")
    }
}
