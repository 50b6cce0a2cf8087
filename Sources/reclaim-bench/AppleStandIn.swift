import Foundation
import Hummingbird
import Logging
import NIOCore
import ReclaimDev
import ServiceLifecycle
import SwiftASN1
import UnixSignals
import X509

/// `reclaim-bench apple-stand-in DIR`: Get All Subscription Statuses on loopback, as `scripts/bench backfill` meets
/// it: Apple's production limit enforced (`--rate`, default 50 a second, ``AppleRateWindow``: 429 with
/// `RateLimitExceededError` and `Retry-After` as UNIX milliseconds), each answer `--latency-ms` late (default 100),
/// each id an expired subscription signed by a throw-away CA whose root it writes to DIR/root.pem. Writes its port to
/// DIR/port once listening; on SIGTERM prints its counts as JSON (requests, 429s, history pages) and ends. With
/// `--history N`, Get Notification History too (``NotificationHistory``).
enum AppleStandIn {
    static func run(_ options: BenchOptions) async throws {
        let directory = try options.positional(0)
        let window = AppleRateWindow(perSecond: options.int("rate", default: 50))
        let latency = Duration.milliseconds(options.int("latency-ms", default: 100))
        let ca = try TestCertificateAuthority()
        try ca.root.serializeAsPEM().pemString.write(toFile: directory + "/root.pem", atomically: true, encoding: .utf8)
        let requests = Counter()
        let historyPages = Counter()
        let history = try NotificationHistory(count: options.int("history", default: 0), ca: ca)
        let router = Router()
        router.post("/inApps/v1/notifications/history") { request, context -> Response in
            historyPages.add()
            let body = try await request.body.collect(upTo: 1 << 16)
            try await Task.sleep(for: latency)
            return json(.ok, history.page(Data(body.readableBytesView), token: request.uri.queryParameters["paginationToken"].map(String.init)))
        }
        router.get("/inApps/v1/subscriptions/:id") { request, context -> Response in
            requests.add()
            let refusedUntil = window.admit()
            try await Task.sleep(for: latency)
            if let refusedUntil {
                var response = json(.tooManyRequests, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#)
                response.headers[.retryAfter] = "\(Int64((refusedUntil.timeIntervalSince1970 * 1000).rounded(.up)))"
                return response
            }
            let id = context.parameters.get("id") ?? ""
            return json(.ok, try answer(for: id, ca: ca))
        }
        var logger = Logger(label: "apple-stand-in")
        logger.logLevel = .warning
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                try? Data("\(channel.localAddress?.port ?? 0)\n".utf8).write(to: URL(fileURLWithPath: directory + "/port"), options: .atomic)
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        printFigures(["requests": requests.value, "rate_limited": window.refused, "history_pages": historyPages.value])
    }

    /// An expired subscription (expired by choice) whose original transaction id is `id`.
    static func answer(for id: String, ca: TestCertificateAuthority) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction: [String: Any] = [
            "originalTransactionId": id, "transactionId": id, "bundleId": "com.example.bench", "productId": "com.example.monthly",
            "environment": "Production", "signedDate": now, "type": "Auto-Renewable Subscription", "expiresDate": now - 86_400_000,
        ]
        let renewal: [String: Any] = [
            "originalTransactionId": id, "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
            "autoRenewStatus": 0, "environment": "Production", "signedDate": now, "expirationIntent": 1,
        ]
        let body: [String: Any] = [
            "environment": "Production", "bundleId": "com.example.bench", "appAppleId": 1_234_567_890,
            "data": [
                [
                    "subscriptionGroupIdentifier": "21000000",
                    "lastTransactions": [
                        [
                            "status": 2, "originalTransactionId": id, "signedTransactionInfo": try ca.sign(json: transaction),
                            "signedRenewalInfo": try ca.sign(json: renewal),
                        ]
                    ],
                ]
            ],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}
