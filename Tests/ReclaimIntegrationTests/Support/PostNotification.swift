import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// POSTs a notification body to a server on 127.0.0.1 over a real socket; the HTTP status, or nil when the
/// connection failed (refused, reset, timed out).
func postNotification(_ body: Data, port: Int, timeout: TimeInterval = 10) async -> Int? {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/apple/notifications")!)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = body
    request.timeoutInterval = timeout
    guard let (_, response) = try? await URLSession.shared.data(for: request) else { return nil }
    return (response as? HTTPURLResponse)?.statusCode
}
