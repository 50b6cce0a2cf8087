import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReclaimDomain

/// `reclaim dev --demo`: a subscriber who buys and then turns auto-renew off, as signed notifications from a
/// demo CA that only the dev config trusts, posted to the running server like Apple would. The demo campaign
/// answers the second with a signed offer, which the printed curl fetches.
struct DemoNotifications {
    let ca: TestCertificateAuthority
    let bundleId: String
    let productId: String
    let appAccountToken: String

    /// A new subscription id for each run (the campaign's cooldown would skip a repeat), outside the demo
    /// campaign's holdout so that the demo shows an offer.
    static func originalTransactionId(campaignId: String, holdoutPercent: Int) -> String {
        var candidate = Int64(Date().timeIntervalSince1970 * 1000)
        while Holdout.isHeldOut(originalTransactionId: "\(candidate)", campaignId: campaignId, percent: holdoutPercent) { candidate += 1 }
        return "\(candidate)"
    }

    /// SUBSCRIBED/INITIAL_BUY, then DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, as request bodies.
    func bodies(originalTransactionId: String, now: Date = Date()) throws -> [Data] {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        return try [("SUBSCRIBED", "INITIAL_BUY", 1, millis - 2000), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", 0, millis - 1000)]
            .map { type, subtype, autoRenew, signedDate in
                let transaction: [String: Any] = [
                    "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": bundleId,
                    "productId": productId, "purchaseDate": millis - 60_000, "originalPurchaseDate": millis - 60_000,
                    "expiresDate": millis + 30 * 86_400_000, "type": "Auto-Renewable Subscription", "appAccountToken": appAccountToken,
                    "environment": "Sandbox", "storefront": "USA", "signedDate": signedDate, "inAppOwnershipType": "PURCHASED",
                ]
                let renewal: [String: Any] = [
                    "originalTransactionId": originalTransactionId, "productId": productId, "autoRenewProductId": productId,
                    "autoRenewStatus": autoRenew, "environment": "Sandbox", "signedDate": signedDate,
                ]
                let payload: [String: Any] = [
                    "notificationType": type, "subtype": subtype, "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                    "signedDate": signedDate,
                    "data": [
                        "bundleId": bundleId, "environment": "Sandbox", "status": 1,
                        "signedTransactionInfo": try ca.sign(json: transaction), "signedRenewalInfo": try ca.sign(json: renewal),
                    ],
                ]
                return try JSONSerialization.data(withJSONObject: ["signedPayload": try ca.sign(json: payload)])
            }
    }

    /// Posts each body and returns the server's answers as "STATUS body" lines. AsyncHTTPClient, not URLSession:
    /// Foundation's networking would tie the binary to libcurl for this one use.
    static func post(_ bodies: [Data], to url: URL) async throws -> [String] {
        var answers: [String] = []
        for body in bodies {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let answer = try await response.body.collect(upTo: 64 * 1024)
            answers.append("\(response.status.code) \(String(buffer: answer))")
        }
        return answers
    }
}
