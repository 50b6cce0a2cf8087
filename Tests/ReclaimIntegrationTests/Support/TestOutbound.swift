import Foundation
import ReclaimDomain
import ReclaimStore

/// Stored notifications for the outbound sender's tests: each queues one forward per synced target.
enum TestOutbound {
    /// `count` TEST notifications of com.example.app (Sandbox); notification `i`'s body is
    /// `{"signedPayload": "header.payload<i>.signature"}`.
    static func records(_ count: Int, bundleId: String = "com.example.app") -> [NotificationRecord] {
        (0..<count).map { index in
            NotificationRecord(
                notificationUUID: UUID(),
                notificationType: "TEST",
                subtype: nil,
                bundleId: bundleId,
                environment: "Sandbox",
                signedDateMillis: 1_700_000_000_000 + Int64(index),
                originalTransactionId: nil,
                transactionId: nil,
                appAccountToken: nil,
                productId: nil,
                signedPayload: "header.payload\(index).signature",
                received: ReceivedBody(
                    body: Array(#"{"signedPayload": "header.payload\#(index).signature"}"#.utf8),
                    signedPayload: "header.payload\(index).signature",
                    contentType: "application/json; charset=utf-8"
                )
            )
        }
    }
}
