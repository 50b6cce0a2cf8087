import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimClient
import ReclaimDomain
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

/// ReclaimClient's cancel flow without StoreKit (the part every platform runs, `CancelFlow`), against a real server
/// and PostgreSQL: each path a subscriber can take, the sheet it ends on, and the steps Reclaim records, in order.
/// StoreKit's sheets and purchase are stand-in closures, as the StoreKit glue passes them; the server is never one.
@Suite("ReclaimClient's cancel flow: every path ends on Apple's sheet or a purchase, its steps recorded in order", .poolWatchdog)
struct CancelFlowClientTests {
    static let logger = TestPostgres.logger
    static let app = "GeniusParentingAI"
    static let monthly = CancelSheetTests.monthly
    static let yearly = CancelFlowTests.yearly

    /// One campaign per survey answer, without a holdout or variants, so that each answer's path is known: an offer for
    /// the price, a message for a missing feature, a switch for those not using it; none for refund or no answer.
    static let campaigns = """
          - id: save-offer
            app: GeniusParentingAI
            trigger: CANCEL_FLOW
            reasons: [too_expensive]
            offer: {productId: \(monthly), offerIdentifier: SAVE50}
          - id: stay-note
            app: GeniusParentingAI
            trigger: CANCEL_FLOW
            reasons: [missing_features]
            message: roadmap-2027
          - id: switch-down
            app: GeniusParentingAI
            trigger: CANCEL_FLOW
            reasons: [not_using]
            switchTo: {productId: \(yearly)}
        """

    struct Subscriber: Sendable {
        let otid: String
        let token: UUID
    }

    enum StoreKitStandIn: Error { case paymentNotAllowed }

    /// What the flow opened: Apple's sheets, through `openSheet` (as the StoreKit glue or a SwiftUI view opens them),
    /// and URLs, through `fallback`.
    @MainActor
    final class Sheets {
        struct SheetFailed: Error {}

        var opened: [CancelFlow.Sheet] = []
        var urls: [URL] = []
        /// Sheets that fail to open, as StoreKit's can.
        var failing: Set<CancelFlow.Sheet> = []

        /// A flow whose sheets open here; `sheets: false` for a platform without Apple's sheets (tvOS, watchOS).
        func flow(
            _ reclaim: ReclaimClient,
            for subscriber: CancelFlow.Subscriber?,
            deadline: TimeInterval = CancelFlow.defaultDeadline,
            sheets: Bool = true
        ) -> CancelFlow {
            let open: @MainActor (CancelFlow.Sheet) async throws -> Void = { [self] sheet in
                if failing.contains(sheet) { throw SheetFailed() }
                opened.append(sheet)
            }
            return reclaim.cancelFlow(for: subscriber, deadline: deadline, openSheet: sheets ? open : nil) { [self] url in urls.append(url) }
        }
    }

    /// A server with `setup`'s config and `count` monthly subscribers Reclaim knows (their INITIAL_BUY processed); runs
    /// `body` with the database, the server's URL, an app key and the subscribers.
    static func withServer(
        _ setup: CampaignTestSetup,
        ca: TestCertificateAuthority,
        count: Int,
        _ body: @Sendable (Database, URL, String, [Subscriber]) async throws -> Void
    ) async throws {
        let subscribers = (0..<count).map { Subscriber(otid: String(3_200_000_000_000_000 + $0), token: UUID()) }
        try await withTestDatabase { client, _ in
            var dependencies = try await CancelFlowTests.subscribed(subscribers.map { ($0.otid, $0.token) }, setup: setup, ca: ca, client: client)
            // These tests are the client's: the server's 2 s deadline is CancelFlowTests' to test, and a busy machine
            // (CI's ordinary suites, eight at once beside a load) once missed it, answering `none` to an offer test.
            dependencies.cancelFlowDeadline = .seconds(30)
            let appKey = try await TestKeys(client: client).create(scope: .app, bundleId: app, logger: logger)
            let server = Application(router: buildRouter(dependencies), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await server.test(.live) { http in
                try await body(client, URL(string: "http://127.0.0.1:\(try #require(http.port))")!, appKey, subscribers)
            }
        }
    }

    /// The steps Reclaim recorded for `flow` (nil: those without a flow), in the order it received them, with their error.
    static func steps(_ client: Database, flow: UUID?) async throws -> [String] {
        let rows =
            if let flow {
                try await client.query("SELECT step, error FROM reclaim.cancel_flow_events WHERE flow_id = \(flow) ORDER BY id", logger: logger)
            } else {
                try await client.query("SELECT step, error FROM reclaim.cancel_flow_events WHERE flow_id IS NULL ORDER BY id", logger: logger)
            }
        var steps: [String] = []
        for try await (step, error) in rows.decode((String, String?).self) { steps.append(error.map { "\(step): \($0)" } ?? step) }
        return steps
    }

    @Test(
        "skipped: Apple's sheet, nothing asked; an offer declined: the manage sheet at once; taken: bought through the purchase path, or failed with StoreKit's error; a message; a switch; refund: the refund sheet, then the manage sheet when it fails; no sheet on the platform: Apple's subscriptions page; each flow's steps in order"
    )
    func paths() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        try await Self.withServer(setup, ca: ca, count: 8) { client, base, appKey, subscribers in
            let flows = try await Self.walk(ReclaimClient(baseURL: base, appKey: appKey), subscribers: subscribers)
            #expect(try await Self.steps(client, flow: nil) == ["survey_skipped"], "a skip before any flow: the one step without a flow")
            #expect(try await Self.steps(client, flow: flows.declined) == ["answer_shown", "declined", "manage_opened"])
            #expect(try await Self.steps(client, flow: flows.taken) == ["answer_shown", "accepted", "purchased"])
            let failed = try await Self.steps(client, flow: flows.failed)
            #expect(failed.prefix(2) == ["answer_shown", "accepted"] && failed.count == 3)
            #expect(
                failed.last?.hasPrefix("purchase_failed: ") == true && failed.last?.hasSuffix("StoreKitStandIn.paymentNotAllowed") == true,
                "\(failed)"
            )
            #expect(try await Self.steps(client, flow: flows.message) == ["answer_shown", "accepted"])
            #expect(try await Self.steps(client, flow: flows.switched) == ["answer_shown", "accepted", "purchase_pending"])
            #expect(try await Self.steps(client, flow: flows.refund) == ["refund_opened", "manage_opened"], "nothing shown for refund")
            #expect(try await Self.steps(client, flow: flows.noSheets) == ["fallback_opened"])
            // The taken offer went through the purchase path: its own funnel has purchase_started.
            let events = try await client.query(
                "SELECT event FROM reclaim.offer_events WHERE offer_id = \(try #require(UUID(uuidString: flows.takenOffer))) ORDER BY event",
                logger: Self.logger
            )
            var offerEvents: [String] = []
            for try await event in events.decode(String.self) { offerEvents.append(event) }
            #expect(offerEvents == ["purchase_started"])
            let decisions = try await client.query("SELECT count(*)::int FROM reclaim.cancel_flow_decisions", logger: Self.logger)
            for try await count in decisions.decode(Int.self) { #expect(count == 7, "one decision per start, none for the skip") }
        }
    }

    /// The flows of ``paths()``, by their ids, once their steps were sent.
    struct WalkedFlows: Sendable {
        var declined: UUID?
        var taken: UUID?
        var takenOffer = ""
        var failed: UUID?
        var message: UUID?
        var switched: UUID?
        var refund: UUID?
        var noSheets: UUID?
    }

    @MainActor
    static func walk(_ reclaim: ReclaimClient, subscribers: [Subscriber]) async throws -> WalkedFlows {
        let sheets = Sheets()
        var flows = WalkedFlows()

        // Skipped: Reclaim is not asked; Apple's manage-subscriptions sheet.
        let skipped = sheets.flow(reclaim, for: .appAccountToken(subscribers[0].token))
        #expect(await skipped.skip() == .manageSubscriptions)
        #expect(sheets.opened == [.manageSubscriptions] && skipped.answer == nil)

        // Too expensive: the campaign's offer, signed for the subscriber. Declined: the manage sheet at once.
        let declined = sheets.flow(reclaim, for: .appAccountToken(subscribers[1].token))
        let offered = await declined.start(reason: "too_expensive")
        guard case .offer(let offer) = offered.content else {
            Issue.record("too_expensive was answered \(offered)")
            return flows
        }
        #expect(offer.offerIdentifier == "SAVE50" && offer.productIdentifier == monthly && offer.campaign == "save-offer")
        #expect(offer.storeKit1.applicationUsername == subscribers[1].token.uuidString.lowercased())
        #expect(offered.campaign == "save-offer" && offered.variant == nil && offered.reason == "too_expensive")
        #expect(offered.originalTransactionId == subscribers[1].otid && offered.next == .manageSubscriptions && declined.next == .manageSubscriptions)
        #expect(await declined.decline() == .manageSubscriptions)
        #expect(sheets.opened == [.manageSubscriptions, .manageSubscriptions])
        flows.declined = offered.flowId

        // Taken: bought through the client's purchase path (the product check, the re-fetch of a spent nonce, the
        // offer's own events), with the offer Reclaim answered. No sheet opens.
        let taken = sheets.flow(reclaim, for: .appAccountToken(subscribers[2].token))
        let takenAnswer = await taken.start(reason: "too_expensive")
        guard case .offer(let takenOffer) = takenAnswer.content else {
            Issue.record("too_expensive was answered \(takenAnswer)")
            return flows
        }
        var bought: PendingOffer?
        let outcome = try await taken.acceptOffer { offer in
            try await reclaim.purchase(offer, productID: offer.productIdentifier) { ready in
                bought = ready
                return CancelFlow.Purchase.purchased
            } event: { _ in
                nil
            }
        } purchase: {
            $0
        }
        #expect(outcome == .purchased && bought?.id == takenOffer.id && bought?.storeKit1.nonce == takenOffer.storeKit1.nonce)
        #expect(
            try await taken.acceptSwitch { _ in
                Issue.record("an offer is not a switch")
            } purchase: { _ in
                nil
            } == nil
        )
        flows.taken = takenAnswer.flowId
        flows.takenOffer = takenOffer.id

        // Taken, and StoreKit throws: purchase_failed with its error, which reaches the app.
        let failing = sheets.flow(reclaim, for: .appAccountToken(subscribers[3].token))
        let failingAnswer = await failing.start(reason: "too_expensive")
        await #expect(throws: StoreKitStandIn.self) {
            _ = try await failing.acceptOffer { _ -> CancelFlow.Purchase in
                throw StoreKitStandIn.paymentNotAllowed
            } purchase: {
                $0
            }
        }
        flows.failed = failingAnswer.flowId

        // Missing features: the message key the app words itself; the subscriber stays.
        let noted = sheets.flow(reclaim, for: .appAccountToken(subscribers[4].token))
        let note = await noted.start(reason: "missing_features")
        #expect(note.content == .message("roadmap-2027") && note.campaign == "stay-note")
        noted.accept()
        flows.message = note.flowId

        // Not using it: a switch to the yearly plan, bought by the app; Ask to Buy holds it.
        let switching = sheets.flow(reclaim, for: .appAccountToken(subscribers[5].token))
        let switchAnswer = await switching.start(reason: "not_using")
        #expect(switchAnswer.content == .switchTo(productIdentifier: yearly))
        let pending = try await switching.acceptSwitch { product in
            #expect(product == yearly)
            return CancelFlow.Purchase.pending
        } purchase: {
            $0
        }
        #expect(pending == .pending)
        flows.switched = switchAnswer.flowId

        // Refund: nothing to show (no campaign takes it), and Apple's refund request sheet next; when that sheet
        // fails, the manage sheet instead.
        let refunding = sheets.flow(reclaim, for: .appAccountToken(subscribers[6].token))
        let refund = await refunding.start(reason: CancelFlow.refundReason)
        #expect(refund.content == .nothing && refund.next == .refundRequest && refund.flowId != nil && refunding.next == .refundRequest)
        #expect(await refunding.open() == .refundRequest)
        sheets.failing = [.refundRequest]
        #expect(await refunding.open() == .manageSubscriptions)
        #expect(sheets.opened.suffix(2) == [.refundRequest, .manageSubscriptions])
        flows.refund = refund.flowId

        // No answer, on a platform without Apple's sheets: Apple's subscriptions page.
        let noSheets = sheets.flow(reclaim, for: .appAccountToken(subscribers[7].token), sheets: false)
        let unanswered = await noSheets.start(reason: nil)
        #expect(unanswered.content == .nothing && unanswered.next == .manageSubscriptions && unanswered.reason == nil)
        #expect(await noSheets.open() == .subscriptionsPage)
        #expect(sheets.urls == [CancelFlow.subscriptionsPageURL])
        flows.noSheets = unanswered.flowId

        await reclaim.backgroundEventsSent()
        return flows
    }

    @Test(
        "never in the way: Reclaim unreachable, a request it refuses, or no answer within the deadline: nothing to show, no error, and Apple's sheet (the refund sheet for refund)"
    )
    func neverInTheWay() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, settings: Self.campaigns)
        defer { setup.remove() }
        try await Self.withServer(setup, ca: ca, count: 1) { client, base, appKey, subscribers in
            let reclaim = ReclaimClient(baseURL: base, appKey: appKey)
            // A reason not in the app's cancelReasons, a transaction Apple did not sign, a wrong app key: refused.
            try await Self.expectNothing(reclaim, .appAccountToken(subscribers[0].token), reason: "bored")
            try await Self.expectNothing(reclaim, .signedTransaction("not.a.transaction"), reason: "too_expensive")
            try await Self.expectNothing(
                ReclaimClient(baseURL: base, appKey: "rk_app_wrong"),
                .appAccountToken(subscribers[0].token),
                reason: "too_expensive"
            )
            let decisions = try await client.query("SELECT count(*)::int FROM reclaim.cancel_flow_decisions", logger: Self.logger)
            for try await count in decisions.decode(Int.self) { #expect(count == 0) }
        }
        // Unreachable (nothing listens on port 1): the retries end within the deadline.
        let unreachable = ReclaimClient(baseURL: URL(string: "http://127.0.0.1:1")!, appKey: "rk_app_x")
        try await Self.expectNothing(unreachable, .appAccountToken(UUID()), reason: "too_expensive")
        try await Self.expectNothing(unreachable, .appAccountToken(UUID()), reason: CancelFlow.refundReason)
        // A server that answers too late: the flow goes on at its deadline, and the request is cancelled.
        let router = Router()
        router.post("/v1/cancel-flow") { _, _ -> Response in
            try await Task.sleep(nanoseconds: 3_000_000_000)
            return Response(status: .ok)
        }
        let slow = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await slow.test(.live) { http in
            let reclaim = ReclaimClient(baseURL: URL(string: "http://127.0.0.1:\(try #require(http.port))")!, appKey: "k")
            try await Self.expectNothing(reclaim, .appAccountToken(UUID()), reason: "too_expensive", deadline: 0.5)
        }
        // The app's user-token closure stuck where cancellation is not heard: the flow still goes on at its deadline,
        // before the closure ends (a task group would have waited for it).
        let ended = Ended()
        let stuck = ReclaimClient(
            baseURL: URL(string: "http://127.0.0.1:1")!,
            appKey: "rk_app_x",
            userToken: {
                await withCheckedContinuation { done in DispatchQueue.global().asyncAfter(deadline: .now() + 10) { done.resume() } }
                ended.mark()
                return "token"
            }
        )
        try await Self.expectNothing(stuck, .appAccountToken(UUID()), reason: "too_expensive", deadline: 0.5)
        #expect(!ended.marked, "the flow waited for the user-token closure")
    }

    /// Starts a flow that Reclaim does not answer: nothing to show within the deadline and a second, no flow, and
    /// Apple's sheet next.
    @MainActor
    static func expectNothing(
        _ reclaim: ReclaimClient,
        _ subscriber: CancelFlow.Subscriber,
        reason: String,
        deadline: TimeInterval = CancelFlow.defaultDeadline
    ) async throws {
        let sheets = Sheets()
        let flow = sheets.flow(reclaim, for: subscriber, deadline: deadline)
        let started = Date()
        let answer = await flow.start(reason: reason)
        #expect(Date().timeIntervalSince(started) < deadline + 1, "the flow waited past its deadline")
        #expect(answer.content == .nothing && answer.flowId == nil && answer.campaign == nil && answer.reason == reason, "\(answer)")
        let next: CancelFlow.Sheet = reason == CancelFlow.refundReason ? .refundRequest : .manageSubscriptions
        #expect(answer.next == next)
        #expect(await flow.decline() == (next == .refundRequest ? .refundRequest : .manageSubscriptions))
        #expect(sheets.opened == [next])
        await reclaim.backgroundEventsSent()
    }

    @Test(
        "the subscriber named by a transaction Apple signed, or by the appAccountToken with the user token the app requires (none: nothing to show); the offer is fetched again the way the flow found it"
    )
    func subscribers() async throws {
        let ca = try TestCertificateAuthority()
        let setup = try CampaignTestSetup(ca: ca, userTokenSecret: UserTokenTests.secret, settings: Self.campaigns)
        defer { setup.remove() }
        try await Self.withServer(setup, ca: ca, count: 2) { _, base, appKey, subscribers in
            // By a signed transaction: the lookup's proof; no user token asked for.
            let transaction = try ca.sign(json: [
                "originalTransactionId": subscribers[0].otid, "transactionId": subscribers[0].otid, "bundleId": Self.app,
                "productId": Self.monthly, "environment": "Sandbox", "signedDate": Int64(Date().timeIntervalSince1970 * 1000) - 60_000,
                "type": "Auto-Renewable Subscription",
            ])
            let signed = ReclaimClient(baseURL: base, appKey: appKey)
            try await Self.expectOffer(signed, .signedTransaction(transaction), otid: subscribers[0].otid)

            // By the appAccountToken: with the user token the app's backend made, the offer; without, nothing.
            let token = subscribers[1].token
            let signedIn = ReclaimClient(baseURL: base, appKey: appKey) {
                try await UserTokenTests.token(for: token.uuidString.lowercased(), expiresIn: 600)
            }
            try await Self.expectOffer(signedIn, .appAccountToken(token), otid: subscribers[1].otid)
            try await Self.expectNothing(ReclaimClient(baseURL: base, appKey: appKey), .appAccountToken(token), reason: "too_expensive")
        }
    }

    /// Starts a flow that Reclaim answers with the campaign's offer for `otid`, which the client can fetch again.
    @MainActor
    static func expectOffer(_ reclaim: ReclaimClient, _ subscriber: CancelFlow.Subscriber, otid: String) async throws {
        let flow = Sheets().flow(reclaim, for: subscriber)
        let answer = await flow.start(reason: "too_expensive")
        guard case .offer(let offer) = answer.content else {
            Issue.record("\(subscriber) was answered \(answer)")
            return
        }
        #expect(answer.originalTransactionId == otid && offer.offerIdentifier == "SAVE50")
        let again = try #require(try await reclaim.refreshed(offer), "the flow's offer is the subscriber's live offer")
        #expect(again.id == offer.id && again.storeKit1.nonce != offer.storeKit1.nonce)
        await reclaim.backgroundEventsSent()
    }
}

/// Whether something ended, read from another task.
final class Ended: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func mark() { lock.withLock { value = true } }
    var marked: Bool { lock.withLock { value } }
}
