import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// What the stand-in Apple knows of subscriptions for make-goods and account repair: each one's expiry, the
/// extensions it received, which are family-shared or ineligible, its app account token, and the mass extensions.
final class StandInAccounts: Sendable {
    struct Subscription: Sendable {
        var expiresDate: Int64
        var webOrderLineItemId: String
        /// Apple's state refuses an extension (a free offer period, billing retry, a past grace period, expired).
        var ineligible = false
        var familyShared = false
        /// When each extension was granted, UNIX milliseconds, with its requestIdentifier and answer.
        var extensions: [(at: Int64, requestIdentifier: String, answer: String)] = []
        var appAccountToken: String?
    }
    struct MassExtension: Sendable {
        var productId: String
        var body: String
        /// Status polls answered `complete: false` before it completes.
        var pollsLeft: Int
    }

    /// By original transaction id.
    let subscriptions: Mutex<[String: Subscription]> = Mutex([:])
    /// Transaction ids Apple knows that are not original ones (a renewal's).
    let renewalTransactionIds: Mutex<Set<String>> = Mutex([])
    /// By requestIdentifier.
    let massExtensions: Mutex<[String: MassExtension]> = Mutex([:])
    /// Every body received by these endpoints, in order, by endpoint identifier.
    let bodies: Mutex<[(endpoint: String, body: String)]> = Mutex([])
    /// Apple's clock (UNIX milliseconds), for the 365 days.
    let now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    func add(_ originalTransactionId: String, expiresDate: Int64, ineligible: Bool = false, familyShared: Bool = false) {
        subscriptions.withLock {
            $0[originalTransactionId] = Subscription(
                expiresDate: expiresDate,
                webOrderLineItemId: "wo-\(originalTransactionId)",
                ineligible: ineligible,
                familyShared: familyShared
            )
        }
    }
}

extension AppleAPIStandIn {
    static func error(_ code: Int, _ message: String) -> String { #"{"errorCode":\#(code),"errorMessage":"\#(message)"}"# }

    func addAccountRoutes(to router: Router<BasicRequestContext>) {
        router.put("/inApps/v1/subscriptions/extend/:id") { request, context in
            try await self.answer(request, context, endpoint: "extendSubscriptionRenewalDate") { body in
                self.extend(context.parameters.get("id")?.removingPercentEncoding ?? "", body: body)
            }
        }
        router.post("/inApps/v1/subscriptions/extend/mass") { request, context in
            try await self.answer(request, context, endpoint: "extendRenewalDatesForAllActiveSubscribers") { body in
                self.massExtend(body)
            }
        }
        router.get("/inApps/v1/subscriptions/extend/mass/:product/:request") { request, context in
            try await self.answer(request, context, endpoint: "getStatusOfSubscriptionRenewalDateExtensions") { _ in
                self.massStatus(
                    product: context.parameters.get("product")?.removingPercentEncoding ?? "",
                    request: context.parameters.get("request")?.removingPercentEncoding ?? ""
                )
            }
        }
        router.put("/inApps/v1/transactions/:id/appAccountToken") { request, context in
            try await self.answer(request, context, endpoint: "setAppAccountToken") { body in
                self.setToken(context.parameters.get("id")?.removingPercentEncoding ?? "", body: body)
            }
        }
    }

    /// The fields of an extension body Apple checks, or its 400.
    private func extensionFields(_ body: Data, extra: Set<String> = []) -> ([String: Any], String?) {
        guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            Set(fields.keys).isSubset(of: Set(["extendByDays", "extendReasonCode", "requestIdentifier"]).union(extra))
        else { return ([:], #"{"errorMessage":"malformed"}"#) }
        guard let days = fields["extendByDays"] as? Int, (1...90).contains(days) else {
            return (fields, Self.error(4_000_009, "Invalid request. The extend by days value is invalid."))
        }
        guard let reason = fields["extendReasonCode"] as? Int, (0...3).contains(reason) else {
            return (fields, Self.error(4_000_010, "Invalid request. The extend reason code is invalid."))
        }
        guard let id = fields["requestIdentifier"] as? String, (1...128).contains(id.count) else {
            return (fields, Self.error(4_000_011, "Invalid request. The request identifier is invalid."))
        }
        return (fields, nil)
    }

    private func extend(_ id: String, body: Data) -> (HTTPResponse.Status, String) {
        accounts.bodies.withLock { $0.append(("extendSubscriptionRenewalDate", String(decoding: body, as: UTF8.self))) }
        let (fields, refusal) = extensionFields(body)
        if let refusal { return (.badRequest, refusal) }
        let days = fields["extendByDays"] as? Int ?? 0
        let requestIdentifier = fields["requestIdentifier"] as? String ?? ""
        let now = accounts.now()
        return accounts.subscriptions.withLock { subscriptions -> (HTTPResponse.Status, String) in
            guard var subscription = subscriptions[id] else {
                return (.notFound, Self.error(4_040_005, "Original transaction id not found."))
            }
            // The same requestIdentifier again is the same request: its first answer, no second extension.
            if let earlier = subscription.extensions.first(where: { $0.requestIdentifier == requestIdentifier }) { return (.ok, earlier.answer) }
            if subscription.familyShared {
                return (
                    .forbidden, Self.error(4_030_007, "Subscription is not eligible for extension because it was obtained through Family Sharing.")
                )
            }
            if subscription.ineligible || subscription.expiresDate < now {
                return (.forbidden, Self.error(4_030_004, "Forbidden - subscription state ineligible for extension."))
            }
            // "you can extend the renewal date twice within a year (365 days) per customer"
            let year: Int64 = 365 * 86_400_000
            if subscription.extensions.filter({ now - $0.at < year }).count >= 2 {
                return (.forbidden, Self.error(4_030_005, "Forbidden - subscription has reached maximum extension count."))
            }
            subscription.expiresDate += Int64(days) * 86_400_000
            let answer =
                #"{"originalTransactionId":"\#(id)","webOrderLineItemId":"\#(subscription.webOrderLineItemId)","success":true,"effectiveDate":\#(subscription.expiresDate)}"#
            subscription.extensions.append((now, requestIdentifier, answer))
            subscriptions[id] = subscription
            return (.ok, answer)
        }
    }

    private func massExtend(_ body: Data) -> (HTTPResponse.Status, String) {
        let text = String(decoding: body, as: UTF8.self)
        accounts.bodies.withLock { $0.append(("extendRenewalDatesForAllActiveSubscribers", text)) }
        let (fields, refusal) = extensionFields(body, extra: ["productId", "storefrontCountryCodes"])
        if let refusal { return (.badRequest, refusal) }
        guard let product = fields["productId"] as? String, !product.isEmpty else {
            return (.badRequest, Self.error(4_000_023, "Invalid request. The product id is invalid."))
        }
        if let codes = fields["storefrontCountryCodes"] {
            guard let list = codes as? [String], !list.isEmpty else {
                return (.badRequest, Self.error(4_000_027, "Invalid request. The storefront country code list is empty."))
            }
            guard list.allSatisfy({ $0.count == 3 }) else {
                return (.badRequest, Self.error(4_000_028, "Invalid request. A storefront country code is invalid."))
            }
        }
        let id = fields["requestIdentifier"] as? String ?? ""
        // "If you reuse the requestIdentifier to call the endpoint again, the server responds with 200."
        accounts.massExtensions.withLock { if $0[id] == nil { $0[id] = .init(productId: product, body: text, pollsLeft: 1) } }
        return (.ok, #"{"requestIdentifier":"\#(id)"}"#)
    }

    private func massStatus(product: String, request id: String) -> (HTTPResponse.Status, String) {
        accounts.massExtensions.withLock { requests -> (HTTPResponse.Status, String) in
            guard var mass = requests[id], mass.productId == product else {
                return (.notFound, Self.error(4_040_009, "Status request not found."))
            }
            if mass.pollsLeft > 0 {
                mass.pollsLeft -= 1
                requests[id] = mass
                return (.ok, #"{"requestIdentifier":"\#(id)","complete":false}"#)
            }
            return (.ok, #"{"requestIdentifier":"\#(id)","complete":true,"completeDate":\#(accounts.now()),"succeededCount":30,"failedCount":2}"#)
        }
    }

    private func setToken(_ id: String, body: Data) -> (HTTPResponse.Status, String) {
        accounts.bodies.withLock { $0.append(("setAppAccountToken", String(decoding: body, as: UTF8.self))) }
        guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any], Set(fields.keys) == ["appAccountToken"],
            let token = fields["appAccountToken"] as? String
        else { return (.badRequest, #"{"errorMessage":"malformed"}"#) }
        guard UUID(uuidString: token) != nil else {
            return (.badRequest, Self.error(4_000_183, "Invalid request. The app account token field must be a valid UUID."))
        }
        if accounts.renewalTransactionIds.withLock({ $0.contains(id) }) {
            return (.badRequest, Self.error(4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID."))
        }
        return accounts.subscriptions.withLock { subscriptions -> (HTTPResponse.Status, String) in
            guard var subscription = subscriptions[id] else {
                return (.notFound, Self.error(4_040_005, "Original transaction id not found."))
            }
            if subscription.familyShared {
                return (.badRequest, Self.error(4_000_185, "Invalid request. Family Sharing transactions aren't supported by this endpoint."))
            }
            subscription.appAccountToken = token
            subscriptions[id] = subscription
            return (.ok, "")
        }
    }
}
