import Foundation
import ReclaimTestSupport
import SwiftASN1
import X509

/// `reclaim-bench ingest-bodies --out DIR [--notifications N]`: the load for `scripts/bench ingest`,
/// which posts it with wrk to a real `reclaim serve`. Signing happens here, in advance, so the load
/// generator spends nothing on it.
///
/// Writes `DIR/root.pem` (a throw-away CA shaped like Apple's, for the server's `rootCertificates`)
/// and `DIR/bodies.ndjson`: N request bodies, one per line, each a DID_CHANGE_RENEWAL_STATUS
/// notification with its own notificationUUID and three JWS (notification, transaction, renewal
/// info) like Apple's. The nested pairs come from a pool of 1,000 subscribers: the server stores
/// every body but verifies only the outer signature at ingest, so the pool changes nothing it does.
enum IngestBodies {
    static func run(_ options: BenchOptions) throws {
        let directory = URL(fileURLWithPath: try options.string("out"), isDirectory: true)
        let count = options.int("notifications", default: 40_000)
        let ca = try TestCertificateAuthority()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let subscribers = try (0..<1_000).map { _ in try nestedPair(ca: ca, signedDate: now) }
        let path = directory.appendingPathComponent("bodies.ndjson").path
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw BenchError("cannot create \(path)")
        }
        defer { try? file.close() }
        // The header is the same for every body; the payload is written by hand because
        // JSONSerialization took milliseconds per body (every value here is plain ASCII, no escaping needed).
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": try ca.x5c()], options: [.sortedKeys])
        var chunk = Data()
        for index in 0..<count {
            let (transaction, renewal) = subscribers[index % subscribers.count]
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
        print("ingest-bodies: \(count) bodies in \(path)")
    }

    /// A subscriber's signed transaction and renewal info.
    static func nestedPair(ca: TestCertificateAuthority, signedDate: Int64) throws -> (String, String) {
        let originalTransactionId = String(Int64.random(in: 2_000_000_000_000_000..<3_000_000_000_000_000))
        let transaction: [String: Any] = [
            "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": "com.example.app",
            "productId": "com.example.monthly", "environment": "Sandbox", "signedDate": signedDate, "type": "Auto-Renewable Subscription",
            "appAccountToken": UUID().uuidString.lowercased(), "expiresDate": signedDate + 30 * 86_400_000,
        ]
        let renewal: [String: Any] = [
            "originalTransactionId": originalTransactionId, "autoRenewProductId": "com.example.monthly", "productId": "com.example.monthly",
            "autoRenewStatus": 0, "environment": "Sandbox", "signedDate": signedDate,
        ]
        return (try ca.sign(json: transaction), try ca.sign(json: renewal))
    }
}
