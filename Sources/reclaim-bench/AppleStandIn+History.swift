import Foundation
import Hummingbird
import NIOCore
import ReclaimDev

/// `reclaim-bench apple-stand-in DIR --history N`: Get Notification History as `scripts/bench reconcile` meets it: N
/// notifications signed by the stand-in's CA (a DID_RENEW each, with its signed transaction), spread evenly over the
/// 72 hours before start, answered 20 to a page (Apple's page size) in signedDate order within the request's
/// `startDate`…`endDate`, each page `--latency-ms` late; the pagination token is the next item's index.
struct NotificationHistory: Sendable {
    /// (signedDate in UNIX milliseconds, signedPayload), oldest first.
    let items: [(Int64, String)]
    static let pageSize = 20

    init(count: Int, ca: TestCertificateAuthority) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let span: Int64 = 72 * 3_600_000
        var items: [(Int64, String)] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let signed = now - span + span * Int64(index) / Int64(max(count, 1))
            let id = String(8_000_000_000_000_000 + index)
            let transaction: [String: Any] = [
                "originalTransactionId": id, "transactionId": id, "bundleId": "com.example.bench", "productId": "com.example.monthly",
                "environment": "Production", "signedDate": signed, "type": "Auto-Renewable Subscription",
                "expiresDate": signed + 30 * 86_400_000, "purchaseDate": signed, "originalPurchaseDate": signed - 90 * 86_400_000,
                "inAppOwnershipType": "PURCHASED",
            ]
            let payload: [String: Any] = [
                "notificationType": "DID_RENEW", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0", "signedDate": signed,
                "data": [
                    "bundleId": "com.example.bench", "environment": "Production", "appAppleId": 1_234_567_890, "status": 1,
                    "signedTransactionInfo": try ca.sign(json: transaction),
                ] as [String: Any],
            ]
            items.append((signed, try ca.sign(json: payload)))
        }
        self.items = items
    }

    /// One page of the answer to `body` (Apple's NotificationHistoryRequest) from `token`.
    func page(_ body: Data, token: String?) -> String {
        let request = (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
        let start = (request["startDate"] as? NSNumber)?.int64Value ?? 0
        let end = (request["endDate"] as? NSNumber)?.int64Value ?? Int64.max
        // Sorted by signedDate: the window is a range of indices, found by bisection (a page costs O(log n)).
        func firstIndex(atOrAfter time: Int64) -> Int {
            var low = 0
            var high = items.count
            while low < high {
                let middle = (low + high) / 2
                if items[middle].0 < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
        let upper = firstIndex(atOrAfter: end)
        let from = max(firstIndex(atOrAfter: start), Int(token ?? "") ?? 0)
        let shown = from..<max(from, min(from + Self.pageSize, upper))
        let history = shown.map { #"{"signedPayload":"\#(items[$0].1)"}"# }.joined(separator: ",")
        let more = shown.upperBound < upper
        let next = more ? #","paginationToken":"\#(shown.upperBound)""# : ""
        return #"{"notificationHistory":[\#(history)],"hasMore":\#(more)\#(next)}"#
    }
}
