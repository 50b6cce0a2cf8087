import Foundation
import ReclaimDev
import SwiftASN1
import X509

/// `reclaim-bench ingest-bodies --out DIR [--notifications N] [--subscribers S] [--realtime R]`: the load for
/// `scripts/bench ingest`, `e2e` and `delivery`, which post it with wrk to a real `reclaim serve`.
/// Signing happens here, in advance, so the load generator spends nothing on it.
///
/// Writes `DIR/root.pem` (a throw-away CA shaped like Apple's, for the server's `rootCertificates`)
/// and `DIR/bodies.ndjson`: N request bodies, one per line, each a DID_CHANGE_RENEWAL_STATUS /
/// AUTO_RENEW_DISABLED notification with its own notificationUUID and three JWS (notification,
/// transaction, renewal info) like Apple's. The nested pairs come from a pool of S subscribers
/// (default 1,000), body i using subscriber i mod S. Ingest verifies only the outer signature, so for
/// it the pool changes nothing; the e2e benchmark passes S = N, because its workers act on every
/// notification and a campaign offers a subscriber nothing again within its cooldown.
///
/// With `--realtime R` it also writes `DIR/subscribers.tsv` (each subscriber's appAccountToken and
/// originalTransactionId) and `DIR/realtime.ndjson`: R Retention Messaging realtime request bodies for those
/// subscribers (appAppleId 1234567890, Sandbox), signed by the same CA.
enum IngestBodies {
    static func run(_ options: BenchOptions) throws {
        let directory = URL(fileURLWithPath: try options.string("out"), isDirectory: true)
        let count = options.int("notifications", default: 40_000)
        let subscriberCount = max(1, options.int("subscribers", default: 1_000))
        let ca = try TestCertificateAuthority()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)

        // The header is the same for every JWS; the payloads are written by hand because
        // JSONSerialization took milliseconds per body (every value here is plain ASCII, no escaping needed).
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try ca.x5c()], options: [.sortedKeys])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let subscribers = try (0..<min(subscriberCount, count)).map { _ in try nestedPair(ca: ca, header: header, signedDate: now) }
        let path = directory.appendingPathComponent("bodies.ndjson").path
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw BenchError("cannot create \(path)")
        }
        defer { try? file.close() }
        var chunk = Data()
        for index in 0..<count {
            let subscriber = subscribers[index % subscribers.count]
            let (transaction, renewal) = (subscriber.transaction, subscriber.renewal)
            let payload = """
                {"notificationType":"DID_CHANGE_RENEWAL_STATUS","subtype":"AUTO_RENEW_DISABLED",\
                "notificationUUID":"\(UUID().uuidString.lowercased())","version":"2.0","signedDate":\(now),\
                "data":{"bundleId":"com.example.app","environment":"Sandbox","status":1,\
                "signedTransactionInfo":"\(transaction)","signedRenewalInfo":"\(renewal)"}}
                """
            let jws = try TestCertificateAuthority.signCompact(headerJSON: header, payload: Data(payload.utf8), key: ca.leafKey)
            // One body per line: compact JSON holds no raw newline.
            chunk += Data("{\"signedPayload\":\"\(jws)\"}\n".utf8)
            if chunk.count > 1 << 20 {
                try file.write(contentsOf: chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try file.write(contentsOf: chunk)
        print("ingest-bodies: \(count) bodies (\(subscribers.count) subscribers) in \(path)")
        let realtime = options.int("realtime", default: 0)
        guard realtime > 0 else { return }
        let table = subscribers.map { "\($0.token)\t\($0.originalTransactionId)" }.joined(separator: "\n") + "\n"
        try table.write(to: directory.appendingPathComponent("subscribers.tsv"), atomically: true, encoding: .utf8)
        var lines = ""
        for index in 0..<realtime {
            let payload = """
                {"originalTransactionId":"\(subscribers[index % subscribers.count].originalTransactionId)","appAppleId":1234567890,\
                "productId":"com.example.monthly","userLocale":"en-US","requestIdentifier":"\(UUID().uuidString.lowercased())",\
                "signedDate":\(now),"environment":"Sandbox"}
                """
            let jws = try TestCertificateAuthority.signCompact(headerJSON: header, payload: Data(payload.utf8), key: ca.leafKey)
            lines += "{\"signedPayload\":\"\(jws)\"}\n"
        }
        try lines.write(to: directory.appendingPathComponent("realtime.ndjson"), atomically: true, encoding: .utf8)
        print("ingest-bodies: \(realtime) realtime requests in \(directory.appendingPathComponent("realtime.ndjson").path)")
    }

    /// A subscriber of the load: the signed pair, and who it is.
    struct Subscriber {
        let transaction: String
        let renewal: String
        let token: String
        let originalTransactionId: String
    }

    /// A subscriber's signed transaction and renewal info: a monthly subscription bought a year ago, its
    /// own appAccountToken, auto-renew just turned off.
    static func nestedPair(ca: TestCertificateAuthority, header: Data, signedDate: Int64) throws -> Subscriber {
        let originalTransactionId = String(Int64.random(in: 2_000_000_000_000_000..<3_000_000_000_000_000))
        let token = UUID().uuidString.lowercased()
        let purchased = signedDate - 365 * 86_400_000
        let transaction = """
            {"appAccountToken":"\(token)","bundleId":"com.example.app","environment":"Sandbox",\
            "expiresDate":\(signedDate + 30 * 86_400_000),"originalPurchaseDate":\(purchased),\
            "originalTransactionId":"\(originalTransactionId)","productId":"com.example.monthly","purchaseDate":\(signedDate),\
            "signedDate":\(signedDate),"transactionId":"\(originalTransactionId)","type":"Auto-Renewable Subscription"}
            """
        let renewal = """
            {"autoRenewProductId":"com.example.monthly","autoRenewStatus":0,"environment":"Sandbox",\
            "originalTransactionId":"\(originalTransactionId)","productId":"com.example.monthly","signedDate":\(signedDate)}
            """
        return Subscriber(
            transaction: try TestCertificateAuthority.signCompact(headerJSON: header, payload: Data(transaction.utf8), key: ca.leafKey),
            renewal: try TestCertificateAuthority.signCompact(headerJSON: header, payload: Data(renewal.utf8), key: ca.leafKey),
            token: token,
            originalTransactionId: originalTransactionId
        )
    }
}
