import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// An HTTP receiver on loopback for forwarding and webhook tests: it records every request (headers and body
/// bytes) and answers as scripted by the request's number (1-based): 2xx by default, a status, or a hang.
final class TestReceiver: Sendable {
    enum Answer: Sendable {
        case ok
        case status(Int)
        /// Holds the request this long before answering 200 (past the sender's timeout: a hung target).
        case hang(Duration)
        /// Answers 200 after this long (a slow target).
        case delay(Duration)
        /// Answers 200 at once, then sends its body one byte every `every`, `bytes` in all (a trickling target).
        case trickle(every: Duration, bytes: Int)
    }

    struct Received: Sendable {
        let headers: [String: String]
        let body: [UInt8]
        let number: Int
        let at: ContinuousClock.Instant
    }

    private let script: @Sendable (Int) -> Answer
    /// An answer by the request's path, before `script`: targets that differ only in their path.
    private let byPath: @Sendable (String) -> Answer?
    private let requests = Mutex<[Received]>([])
    private let counter = Mutex(0)
    /// Start and end of every hang, for the test to compare ingest's latency inside and outside.
    let hangs = Mutex<[(start: ContinuousClock.Instant, end: ContinuousClock.Instant?)]>([])

    init(script: @escaping @Sendable (Int) -> Answer = { _ in .ok }, byPath: @escaping @Sendable (String) -> Answer? = { _ in nil }) {
        self.script = script
        self.byPath = byPath
    }

    var received: [Received] { requests.withLock { $0 } }

    /// The values of header `name` (e.g. `X-Reclaim-Notification-UUID`) over every recorded request.
    func header(_ name: String) -> [String] { received.compactMap { $0.headers[name.lowercased()] } }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/**") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let number = self.counter.withLock {
                $0 += 1
                return $0
            }
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let answer = self.byPath(request.uri.path) ?? self.script(number)
            switch answer {
            case .hang(let duration):
                let index = self.hangs.withLock {
                    $0.append((ContinuousClock.now, nil))
                    return $0.count - 1
                }
                try? await Task.sleep(for: duration)
                self.hangs.withLock { $0[index].end = ContinuousClock.now }
            case .delay(let duration):
                try? await Task.sleep(for: duration)
            case .ok, .status, .trickle:
                break
            }
            self.requests.withLock {
                $0.append(Received(headers: headers, body: Array(body.readableBytesView), number: number, at: ContinuousClock.now))
            }
            if case .status(let code) = answer { return Response(status: .init(code: code)) }
            if case .trickle(let every, let bytes) = answer {
                return Response(
                    status: .ok,
                    headers: [.contentLength: "\(bytes)"],
                    body: ResponseBody { writer in
                        for _ in 0..<bytes {
                            try await writer.write(ByteBuffer(string: "x"))
                            try await Task.sleep(for: every)
                        }
                        try await writer.finish(nil)
                    }
                )
            }
            return Response(status: .ok)
        }
        return router
    }

    /// Runs `body` with the receiver listening on a loopback port.
    func serve<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let app = Application(router: router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in try await body(client.port!) }
    }
}
