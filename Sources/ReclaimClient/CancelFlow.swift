import Foundation

/// The app's own "Cancel subscription" flow (ReclaimClient 3.3): the subscriber says why (or skips), Reclaim's
/// cancel-flow campaigns answer with an offer, a message, a switch to another product or nothing, and the subscriber
/// takes the answer or goes on to Apple's sheet. Your UI drives it; ``ReclaimClient/cancelFlow(for:canShow:deadline:openSheet:fallback:)``
/// makes one.
///
/// It never stands in the way of cancelling:
/// - ``skip()`` goes straight to Apple's sheet, without asking Reclaim anything;
/// - ``start(reason:)`` never throws: a server error, no answer within ``deadline``, or an answer this client cannot
///   read is ``Answer/Content/nothing``, whose ``Answer/next`` is Apple's sheet;
/// - ``decline()`` opens Apple's sheet at once, and ``open(_:)`` opens it from any step;
/// - a sheet that fails to open, or that Apple declares nowhere here (``SheetUnavailable``), falls back to the next
///   best: Apple's manage-subscriptions sheet for a failed refund request, else Apple's subscriptions page
///   (``subscriptionsPageURL``) through `fallback`.
///
/// Each step is reported to Reclaim (`POST /v1/cancel-flow/events`) in the background, in order, after the steps
/// before it: a report never delays the flow, and one that fails is dropped (the funnel only; the save rates come
/// from Apple's notifications).
@MainActor
public final class CancelFlow {
    /// Who is cancelling: the appAccountToken your purchases carry for the signed-in user (sent with the user token
    /// when the client has a provider), or a transaction of the subscription Apple signed (StoreKit 2's
    /// `jwsRepresentation`), which Reclaim verifies.
    public enum Subscriber: Sendable, Hashable {
        case appAccountToken(UUID)
        case signedTransaction(String)
    }

    /// What your app can show besides Apple's sheets (`canShow`): Reclaim answers with nothing else.
    public enum AnswerKind: String, Sendable, Hashable, CaseIterable {
        /// A promotional offer Reclaim signs, bought as any ``PendingOffer``.
        case offer
        /// A key your app words itself (a campaign's `message:`).
        case message
        /// Another product to move to (a campaign's `switchTo:`).
        case switchTo = "switch"
    }

    /// Apple's sheets, the way out of the flow.
    public enum Sheet: String, Sendable, Hashable, CaseIterable {
        /// Apple's manage-subscriptions sheet, where the subscriber cancels.
        case manageSubscriptions
        /// Apple's refund request sheet, for the survey answer ``CancelFlow/refundReason``.
        case refundRequest
    }

    /// Where ``open(_:)`` took the subscriber.
    public enum Destination: Sendable, Hashable {
        case manageSubscriptions
        case refundRequest
        /// `fallback` with ``CancelFlow/subscriptionsPageURL``: no sheet opened.
        case subscriptionsPage
    }

    /// What became of a purchase the subscriber started by taking an answer, as your purchase call reports it.
    public enum Purchase: Sendable, Hashable {
        case purchased
        /// Awaits approval (Ask to Buy); it may still complete.
        case pending
        /// The subscriber closed the App Store's purchase sheet: the answer stays on screen, nothing is reported.
        case cancelled
    }

    /// Thrown by `openSheet` for a sheet Apple declares nowhere on this platform (or OS version): the flow then
    /// opens the fallback, and reports `fallback_opened` without an error.
    public struct SheetUnavailable: Error, Sendable, Equatable {
        public init() {}
    }

    /// The survey answer that leads to Apple's refund request sheet instead of the manage-subscriptions sheet (in the
    /// app's `cancelReasons` whatever else it lists).
    public nonisolated static let refundReason = "refund"

    /// Apple's subscriptions page: the fallback where no sheet opens.
    public nonisolated static let subscriptionsPageURL = URL(string: "https://apps.apple.com/account/subscriptions")!

    /// How long ``start(reason:)`` waits for Reclaim's answer before it goes on with nothing: the subscriber is
    /// waiting to cancel, and the server itself answers within 2 s or not at all.
    public nonisolated static let defaultDeadline: TimeInterval = 3

    let client: ReclaimClient
    /// Who is cancelling; nil when your app knows neither (then the flow asks Reclaim nothing). Set it before
    /// ``start(reason:)`` when you find it after making the flow (the subscription's latest transaction, say).
    public var subscriber: Subscriber?
    /// What your app can show; Reclaim answers with nothing else.
    public let canShow: Set<AnswerKind>
    /// How long ``start(reason:)`` waits for Reclaim.
    public let deadline: TimeInterval
    private let openSheet: (@MainActor (Sheet) async throws -> Void)?
    private let fallback: @MainActor (URL) async -> Void

    /// The answer of the last ``start(reason:)``; nil before it.
    public private(set) var answer: Answer?

    /// Apple's sheet for the subscriber who goes on cancelling: the answer's, or, before an answer, the
    /// manage-subscriptions sheet.
    public var next: Sheet { answer?.next ?? .manageSubscriptions }

    init(
        client: ReclaimClient,
        subscriber: Subscriber?,
        canShow: Set<AnswerKind>,
        deadline: TimeInterval,
        openSheet: (@MainActor (Sheet) async throws -> Void)?,
        fallback: @escaping @MainActor (URL) async -> Void
    ) {
        self.client = client
        self.subscriber = subscriber
        self.canShow = canShow
        self.deadline = deadline
        self.openSheet = openSheet
        self.fallback = fallback
    }

    /// Asks Reclaim what to show the subscriber who gave `reason` (one of the app's `cancelReasons`; nil: no answer).
    /// Never throws and waits at most ``deadline``: whatever goes wrong is ``Answer/Content/nothing``, whose
    /// ``Answer/next`` is Apple's sheet (the refund request sheet for ``refundReason``). An answer to show is reported as
    /// shown: show it at once (if your app cannot after all, a message key it does not know, call ``decline()``).
    /// Calling it again (the subscriber went back and chose another reason) starts another flow.
    @discardableResult
    public func start(reason: String?) async -> Answer {
        let fresh = await client.cancelFlowAnswer(subscriber: subscriber, reason: reason, canShow: canShow, deadline: deadline)
        answer = fresh
        if fresh.content != .nothing { record(.answerShown) }
        return fresh
    }

    /// The subscriber skips the survey: reported as `survey_skipped`, and Apple's sheet opens.
    @discardableResult
    public func skip() async -> Destination {
        record(.surveySkipped)
        return await open()
    }

    /// The subscriber turns the answer down: reported as `declined`, and Apple's sheet (``next``) opens at once.
    @discardableResult
    public func decline() async -> Destination {
        record(.declined)
        return await open()
    }

    /// The subscriber takes a message (or an answer your app carries out itself): reported as `accepted`.
    public func accept() {
        record(.accepted)
    }

    /// The subscriber takes the offer: reported as `accepted`, then `buy` runs with it (the StoreKit glue buys through
    /// ``ReclaimClient/purchase(_:with:options:using:)``, which reports the offer's own events), then `purchased` or
    /// `purchase_pending` as `purchase` reads the outcome, or `purchase_failed` with the error `buy` threw, which is
    /// rethrown (Apple's sheet stays one ``open(_:)`` away). Nil, and nothing reported, when the answer is not an offer.
    public func acceptOffer<Outcome>(
        buy: @MainActor (PendingOffer) async throws -> Outcome,
        purchase: (Outcome) -> Purchase?
    ) async throws -> Outcome? {
        guard case .offer(let offer)? = answer?.content else { return nil }
        record(.accepted)
        return try await purchasing({ try await buy(offer) }, purchase: purchase)
    }

    /// The subscriber takes the switch: reported as `accepted`, then `buy` runs with the product identifier to move
    /// to, and its outcome is reported as for ``acceptOffer(buy:purchase:)``. Nil, and nothing reported, when the answer
    /// is not a switch.
    public func acceptSwitch<Outcome>(
        buy: @MainActor (String) async throws -> Outcome,
        purchase: (Outcome) -> Purchase?
    ) async throws -> Outcome? {
        guard case .switchTo(let product)? = answer?.content else { return nil }
        record(.accepted)
        return try await purchasing({ try await buy(product) }, purchase: purchase)
    }

    private func purchasing<Outcome>(
        _ buy: @MainActor () async throws -> Outcome,
        purchase: (Outcome) -> Purchase?
    ) async throws -> Outcome {
        let outcome: Outcome
        do {
            outcome = try await buy()
        } catch {
            if !(error is CancellationError) { record(.purchaseFailed, error: ReclaimClient.describe(error)) }
            throw error
        }
        switch purchase(outcome) {
        case .purchased?: record(.purchased)
        case .pending?: record(.purchasePending)
        case .cancelled?, nil: break
        }
        return outcome
    }

    /// Opens Apple's `sheet` (by default ``next``), from any step, and reports which opened. A refund request sheet
    /// that fails gives way to the manage-subscriptions sheet; a sheet that fails, or that Apple declares nowhere here,
    /// to Apple's subscriptions page through `fallback`. Returns once `openSheet` did (Apple's sheets return when the
    /// subscriber closes them).
    @discardableResult
    public func open(_ sheet: Sheet? = nil) async -> Destination {
        let sheet = sheet ?? next
        var failure: (any Error)?
        if let openSheet {
            do {
                try await openSheet(sheet)
                record(sheet == .refundRequest ? .refundOpened : .manageOpened)
                return sheet == .refundRequest ? .refundRequest : .manageSubscriptions
            } catch {
                failure = error
            }
            if sheet == .refundRequest {
                // The subscriber can still cancel there; Apple's refund request is the page's too.
                do {
                    try await openSheet(.manageSubscriptions)
                    record(.manageOpened, error: Self.describe(failure))
                    return .manageSubscriptions
                } catch {
                    failure = error
                }
            }
        }
        await fallback(Self.subscriptionsPageURL)
        record(.fallbackOpened, error: Self.describe(failure))
        return .subscriptionsPage
    }

    /// The error a step is reported with: none for a sheet Apple declares nowhere here (not a failure).
    private static func describe(_ error: (any Error)?) -> String? {
        guard let error, !(error is SheetUnavailable) else { return nil }
        return ReclaimClient.describe(error)
    }

    /// Reports `step` in the background; without a flow (nothing started, or Reclaim did not answer) only a skipped
    /// survey is reported, the one step the server takes without one.
    private func record(_ step: Step, error: String? = nil) {
        let flowId = answer?.flowId
        guard flowId != nil || step == .surveySkipped else { return }
        client.recordInOrder(step, flowId: flowId, errorText: error)
    }
}

extension ReclaimClient {
    /// A cancel flow for `subscriber` (ReclaimClient 3.3), driven from your UI: see ``CancelFlow``. Nothing is sent
    /// until the flow starts or is skipped.
    ///
    /// - Parameters:
    ///   - subscriber: who is cancelling; nil when your app knows neither (Reclaim is then not asked, and the flow
    ///     goes on to Apple's sheet).
    ///   - canShow: what your app can show; Reclaim answers with nothing else.
    ///   - deadline: how long ``CancelFlow/start(reason:)`` waits for Reclaim.
    ///   - openSheet: opens Apple's sheet (the StoreKit glue's `CancelFlow.openAppleSheet(_:in:subscriptionGroupID:refundTransactionID:)`,
    ///     or a SwiftUI view's `manageSubscriptionsSheet`/`refundRequestSheet`); throws ``CancelFlow/SheetUnavailable``
    ///     where Apple declares none. Nil where the platform has neither (tvOS, watchOS): every sheet is the fallback.
    ///   - fallback: opens a URL, ``CancelFlow/subscriptionsPageURL`` (SwiftUI's `openURL`; where nothing can open a
    ///     web page, tell the subscriber where Apple's subscriptions are).
    @MainActor
    public func cancelFlow(
        for subscriber: CancelFlow.Subscriber?,
        canShow: Set<CancelFlow.AnswerKind> = Set(CancelFlow.AnswerKind.allCases),
        deadline: TimeInterval = CancelFlow.defaultDeadline,
        openSheet: (@MainActor (CancelFlow.Sheet) async throws -> Void)?,
        fallback: @escaping @MainActor (URL) async -> Void
    ) -> CancelFlow {
        CancelFlow(client: self, subscriber: subscriber, canShow: canShow, deadline: deadline, openSheet: openSheet, fallback: fallback)
    }
}
