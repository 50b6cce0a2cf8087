/// Why a verified payload is not for an app Reclaim serves (or is inconsistent with itself).
public struct AppIdentityError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// No configured app has this bundle id (or, for realtime requests, this appAppleId).
        case unknownApp
        /// The app is configured, but not for this environment (or the payload names none).
        case environmentNotAccepted
        /// A Production payload whose appAppleId is not the configured one, or the app has none configured.
        case wrongAppAppleId
        /// The nested transaction or renewal info names another app, environment or subscription than the notification.
        case inconsistentPayload
    }

    public let code: Code
    public let reason: String

    /// - Parameter reason: cut to ``LogText/reasonLimit`` characters with control characters escaped: a reason
    ///   may quote the payload, and it is logged, recorded and answered.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = LogText.bounded(reason, limit: LogText.reasonLimit)
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
