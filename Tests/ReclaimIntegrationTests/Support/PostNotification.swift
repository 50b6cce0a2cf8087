import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// POSTs a notification body to a server on 127.0.0.1 over a real socket; the HTTP status, or nil when the
/// connection failed (refused, reset, timed out).
func postNotification(_ body: Data, port: Int, timeout: TimeInterval = 10) async -> Int? {
    if case .status(let status) = await postNotificationOutcome(body, port: port, timeout: timeout) { return status }
    return nil
}

/// What one POST of a notification came to: an HTTP status, or the transport's error (kept for the test's message).
enum PostOutcome: Hashable, CustomStringConvertible {
    case status(Int)
    case transportError(String)

    var description: String {
        switch self {
        case .status(let status): "\(status)"
        case .transportError(let error): "no answer (\(error))"
        }
    }
}

func postNotificationOutcome(_ body: Data, port: Int, timeout: TimeInterval = 10) async -> PostOutcome {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/apple/notifications")!)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = body
    request.timeoutInterval = timeout
    do {
        let (_, response) = try await URLSession.shared.boundedData(for: request)
        return .status((response as? HTTPURLResponse)?.statusCode ?? 0)
    } catch {
        let code = (error as? URLError)?.code.rawValue ?? 0
        return .transportError(error is URLSessionHang ? "\(error)" : "URLError \(code)")
    }
}
