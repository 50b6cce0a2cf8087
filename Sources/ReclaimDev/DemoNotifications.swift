import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReclaimDomain

/// `reclaim dev --demo`: a subscriber who buys and then meets a campaign's trigger (turns auto-renew off, lets the
/// subscription expire, fails to renew, …), as signed notifications from a demo CA that only this `reclaim dev`
/// trusts, posted to the running server like Apple would. The campaign answers the second with a signed offer,
/// which the printed curl fetches.
struct DemoNotifications {
    let ca: TestCertificateAuthority
    let bundleId: String
    let productId: String
    let appAccountToken: String
    /// The environment the notifications claim: one the app accepts that is not Production.
    let environment: String
    /// The notification after SUBSCRIBED/INITIAL_BUY: the campaign's trigger, with a subtype chosen when it has none.
    let trigger: CampaignTrigger
    /// Three-letter storefront code (the campaign's first, when it names some).
    var storefront = "USA"
    /// How long ago the subscription began: longer than a campaign's `minimumTenure`.
    var tenure: TimeInterval = 60
    /// Renewal info's expirationIntent when the subscription expired (the campaign's first, when it names some).
    var expirationIntent: Int?

    /// The subscriber a campaign fires for: its product, storefront, tenure and expiration intent chosen to meet
    /// the campaign's conditions, its trigger made concrete.
    init(ca: TestCertificateAuthority, campaign: CampaignSeed, appAccountToken: String, environment: String) {
        self.ca = ca
        bundleId = campaign.bundleId
        productId = campaign.productId
        self.appAccountToken = appAccountToken
        self.environment = environment
        trigger = Self.concrete(campaign.trigger)
        storefront = campaign.conditions.storefronts?.first ?? "USA"
        tenure = max(60, TimeInterval(campaign.conditions.minimumTenure ?? 0) + 86_400)
        expirationIntent = campaign.conditions.expirationIntents?.first ?? Self.expirationIntent(for: trigger)
    }

    /// What `--demo` needs from a campaign: its app, product, trigger and conditions.
    struct CampaignSeed {
        var id: String
        var bundleId: String
        var productId: String
        var trigger: CampaignTrigger
        var holdoutPercent: Int
        /// The campaign's own conditions: the demo subscriber meets them.
        var conditions: CampaignConditions
    }

    /// A trigger that names no subtype gets the most common one, so the notification reads like Apple's.
    static func concrete(_ trigger: CampaignTrigger) -> CampaignTrigger {
        guard trigger.subtype == nil else { return trigger }
        switch trigger.type {
        case "EXPIRED": return CampaignTrigger(type: "EXPIRED", subtype: "VOLUNTARY")
        case "DID_CHANGE_RENEWAL_STATUS": return CampaignTrigger(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED")
        default: return trigger
        }
    }

    /// Apple's expirationIntent for an EXPIRED subtype: 1 cancelled, 2 billing error, 3 price increase not
    /// accepted, 4 product not for sale.
    static func expirationIntent(for trigger: CampaignTrigger) -> Int? {
        guard trigger.type == "EXPIRED" || trigger.type == "GRACE_PERIOD_EXPIRED" else { return nil }
        switch trigger.subtype {
        case "BILLING_RETRY": return 2
        case "PRICE_INCREASE": return 3
        case "PRODUCT_NOT_FOR_SALE": return 4
        default: return 1
        }
    }

    /// A new subscription id for each run (the campaign's cooldown would skip a repeat), outside the campaign's
    /// holdout so that the demo shows an offer.
    static func originalTransactionId(campaignId: String, holdoutPercent: Int) -> String {
        var candidate = Int64(Date().timeIntervalSince1970 * 1000)
        while Holdout.isHeldOut(originalTransactionId: "\(candidate)", campaignId: campaignId, percent: holdoutPercent) { candidate += 1 }
        return "\(candidate)"
    }

    /// The trigger's subscription status (1 active, 2 expired, 3 billing retry, 4 grace period), whether it still
    /// renews, and whether it has expired.
    private var triggerState: (status: Int, autoRenew: Int, expired: Bool) {
        switch (trigger.type, trigger.subtype) {
        case ("EXPIRED", let subtype), ("GRACE_PERIOD_EXPIRED", let subtype): return (2, subtype == "BILLING_RETRY" ? 1 : 0, true)
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): return (4, 1, false)
        case ("DID_FAIL_TO_RENEW", _): return (3, 1, true)
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"): return (1, 0, false)
        default: return (1, 1, false)
        }
    }

    /// SUBSCRIBED/INITIAL_BUY, then the trigger, as request bodies.
    func bodies(originalTransactionId: String, now: Date = Date()) throws -> [Data] {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        let purchased = millis - Int64(tenure * 1000)
        let state = triggerState
        let steps: [(type: String, subtype: String?, status: Int, autoRenew: Int, expires: Int64, signedDate: Int64)] = [
            ("SUBSCRIBED", "INITIAL_BUY", 1, 1, millis + 30 * 86_400_000, millis - 2000),
            (trigger.type, trigger.subtype, state.status, state.autoRenew, state.expired ? millis - 60_000 : millis + 30 * 86_400_000, millis - 1000),
        ]
        return try steps.map { step in
            let transaction: [String: Any] = [
                "originalTransactionId": originalTransactionId, "transactionId": originalTransactionId, "bundleId": bundleId,
                "productId": productId, "purchaseDate": purchased, "originalPurchaseDate": purchased, "expiresDate": step.expires,
                "type": "Auto-Renewable Subscription", "appAccountToken": appAccountToken, "environment": environment,
                "storefront": storefront, "signedDate": step.signedDate, "inAppOwnershipType": "PURCHASED",
            ]
            var renewal: [String: Any] = [
                "originalTransactionId": originalTransactionId, "productId": productId, "autoRenewProductId": productId,
                "autoRenewStatus": step.autoRenew, "environment": environment, "signedDate": step.signedDate,
            ]
            if step.status == 2, let expirationIntent { renewal["expirationIntent"] = expirationIntent }
            var payload: [String: Any] = [
                "notificationType": step.type, "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                "signedDate": step.signedDate,
                "data": [
                    "bundleId": bundleId, "environment": environment, "status": step.status,
                    "signedTransactionInfo": try ca.sign(json: transaction), "signedRenewalInfo": try ca.sign(json: renewal),
                ],
            ]
            if let subtype = step.subtype { payload["subtype"] = subtype }
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
