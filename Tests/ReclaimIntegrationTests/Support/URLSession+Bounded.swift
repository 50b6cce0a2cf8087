import Foundation
import ReclaimStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession call that never outlives its timeout: on Linux, FoundationNetworking has lost a task's completion
/// (swift-corelibs-foundation #3876, #3497), and a test awaiting it would wait at zero CPU until CI's limit. Past the
/// request's own timeout plus 5 s, these throw ``URLSessionHang`` naming the request instead.
extension URLSession {
    func boundedData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let answer = try await bounded(request.url, timeout: request.timeoutInterval) { try await self.data(for: request) }
        return (answer.data, answer.response)
    }

    func boundedData(from url: URL, timeout: TimeInterval = 30) async throws -> (Data, URLResponse) {
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        return try await boundedData(for: request)
    }

    private struct Answer: @unchecked Sendable {
        let data: Data
        let response: URLResponse
    }

    private func bounded(
        _ url: URL?,
        timeout: TimeInterval,
        _ call: @escaping @Sendable () async throws -> (Data, URLResponse)
    ) async throws -> Answer {
        do {
            return try await within(.seconds(timeout + 5)) {
                let (data, response) = try await call()
                return Answer(data: data, response: response)
            }
        } catch is TimeoutError {
            throw URLSessionHang(url: url?.absoluteString ?? "?", after: timeout + 5)
        }
    }
}

/// URLSession gave no answer and no error past the request's timeout.
struct URLSessionHang: Error, CustomStringConvertible {
    let url: String
    let after: TimeInterval
    var description: String { "URLSession neither answered nor failed \(url) within \(after) s (its timeout plus 5 s)" }
}
