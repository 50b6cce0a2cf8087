import Foundation
import ReclaimDomain
import ReclaimTestSupport
import X509

/// Notifications signed by a throw-away CA, for what Apple's sandbox corpus lacks.
struct TestNotifications {
    let ca: TestCertificateAuthority
    var bundleId = "com.example.app"
    var environment = "Sandbox"
    var appAppleId: Int64? = 1_234_567_890

    /// A signed notification body `{"signedPayload": …}` with a nested signed transaction.
    func body(
        uuid: UUID = UUID(),
        type: String = "DID_CHANGE_RENEWAL_STATUS",
        subtype: String? = "AUTO_RENEW_DISABLED",
        originalTransactionId: String = "2000000000000001",
        appAccountToken: UUID? = UUID(uuidString: "00000000-0000-0000-0000-000000000051"),
        signedDate: Date = Date(),
        transactionFields: [String: Any] = [:],
        dataFields: [String: Any] = [:],
        status: Int = 1
    ) throws -> Data {
        let millis = Int64(signedDate.timeIntervalSince1970 * 1000)
        var transaction: [String: Any] = [
            "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": bundleId,
            "productId": "com.example.monthly", "environment": environment, "signedDate": millis,
            "type": "Auto-Renewable Subscription",
        ]
        if let appAccountToken { transaction["appAccountToken"] = appAccountToken.uuidString.lowercased() }
        transaction.merge(transactionFields) { $1 }
        var data: [String: Any] = [
            "bundleId": bundleId, "environment": environment, "signedTransactionInfo": try ca.sign(json: transaction), "status": status,
        ]
        if let appAppleId { data["appAppleId"] = appAppleId }
        data.merge(dataFields) { $1 }
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid.uuidString.lowercased(), "version": "2.0", "signedDate": millis, "data": data,
        ]
        if let subtype { payload["subtype"] = subtype }
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try ca.sign(json: payload)])
    }
}
