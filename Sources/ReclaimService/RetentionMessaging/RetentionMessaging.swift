import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimDomain
import ReclaimStore

/// Apple's Retention Messaging realtime request from its cancellation sheet ("which offer or message should this
/// subscriber see?"), answered well inside Apple's deadline (about 700 ms): one indexed read, the rules in memory, at
/// most one ES256 signature, and the decision recorded (group commit) before the answer leaves.
///
/// - The request is verified like a notification (chain to a root trusted for the app its appAppleId names, then
///   the signature): a refusal is an ``IngestRefusal``.
/// - It carries no bundleId: the app is the configured one with its appAppleId that accepts its environment;
///   none matches, the answer is empty (Apple then shows its default).
/// - The app's cancel-sheet campaigns (trigger `RETENTION_MESSAGING`) decide first (``CancelSheetEvaluator``): the
///   arm's message, switch-plan or promotional offer; `{}` for the holdout and for a shadow campaign, so Apple's
///   own fallback runs. Each decision is recorded in `reclaim.cancel_sheet_decisions`.
/// - When none decides, the subscriber's live offer, when its grant or its campaign names a `messageIdentifier`,
///   as a promotional offer signed now; otherwise the app's `defaultMessageIdentifier`, or nothing.
/// - The database gets ``budget``: an outage, a timeout or a full commit queue answers `{}` at once. Apple: "If your
///   server response fails for any reason, the system displays a default retention message that you configure in
///   advance." `{}` says the same without Apple waiting for its deadline.
public struct RetentionMessaging: Sendable {
    let verifier: AppleJWSVerifier
    let config: ReclaimConfig
    let campaigns: [Campaign]
    let postgres: Database
    let issuer: OfferIssuer
    let recorder: CommitBatcher<CancelSheetStore.Record, Void>
    /// The database's share of Apple's deadline: reading the context, and recording the decision
    /// (`server.retentionBudgetMilliseconds`).
    var budget: Duration = .milliseconds(300)
    let now: @Sendable () -> Date

    public init(
        verifier: AppleJWSVerifier,
        config: ReclaimConfig,
        campaigns: [Campaign],
        postgres: Database,
        issuer: OfferIssuer,
        recorder: CommitBatcher<CancelSheetStore.Record, Void>,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.config = config
        self.campaigns = campaigns.filter(\.trigger.isCancelSheet)
        self.postgres = postgres
        self.issuer = issuer
        self.recorder = recorder
        self.now = now
    }

    /// Verifies `signedPayload` and answers it; a refusal when it does not verify.
    func answer(signedPayload: String, logger: Logger) async throws -> Result<RealtimeAnswer, IngestRefusal> {
        let realtime: RealtimeRequest
        do {
            realtime = try await verifier.verifyRealtimeRequest(signedPayload)
        } catch {
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "refused")]).increment()
            return .failure(IngestRefusal(error))
        }
        let answer = await answer(realtime, logger: logger)
        Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", answer.kind)]).increment()
        return .success(answer)
    }

    /// The answer to a verified request; `{}` when the database does not answer within ``budget``.
    func answer(_ realtime: RealtimeRequest, logger: Logger) async -> RealtimeAnswer {
        let environment = realtime.environment.rawValue
        guard let app = config.apps.first(where: { $0.appAppleId == realtime.appAppleId && $0.environments.contains(environment) }) else {
            logger.notice(
                "retention request for no configured app",
                metadata: ["appAppleId": "\(realtime.appAppleId)", "environment": "\(environment)"]
            )
            return RealtimeAnswer()
        }
        let subscriber = SubscriberKey(bundleId: app.bundleId, environment: environment, originalTransactionId: realtime.originalTransactionId)
        do {
            return try await within(budget) { try await decide(realtime, for: subscriber, app: app, logger: logger) }
        } catch {
            // A decision whose record was already queued may still commit after this: it is then recorded as
            // answered although Apple got `{}`; rare (the commit outran the budget), and logged here.
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "unavailable")]).increment()
            logger.warning(
                "retention request answered {}: the database did not answer in time",
                metadata: ["error": "\(error)", "budget": "\(budget)", "requestIdentifier": "\(realtime.requestIdentifier)"]
            )
            return RealtimeAnswer()
        }
    }

    private func decide(
        _ realtime: RealtimeRequest,
        for subscriber: SubscriberKey,
        app: ReclaimConfig.App,
        logger: Logger
    ) async throws
        -> RealtimeAnswer
    {
        let appCampaigns = campaigns.filter { $0.bundleId == app.bundleId }
        guard !appCampaigns.isEmpty else { return try await fallback(realtime, for: subscriber, app: app, logger: logger) }
        let context = try await postgres.withConnection(logger: logger) {
            try await CancelSheetStore.context(of: subscriber, connection: $0, logger: logger)
        }
        let (decision, skipped) = CancelSheetEvaluator.decide(
            campaigns: appCampaigns,
            request: .init(
                bundleId: app.bundleId,
                originalTransactionId: realtime.originalTransactionId,
                productId: realtime.productId,
                now: now()
            ),
            state: context.state,
            earlier: context.earlier,
            paused: context.paused,
            discounts: context.discounts
        )
        for (campaign, reason) in skipped {
            logger.debug("cancel-sheet campaign skipped", metadata: ["campaign": "\(campaign)", "reason": "\(reason)"])
        }
        guard let decision else { return try await fallback(realtime, for: subscriber, app: app, logger: logger) }
        if decision.outcome == .switchedOff {
            Counter(
                label: "reclaim_cancel_sheet_decisions_total",
                dimensions: [
                    ("campaign", decision.campaign.id), ("outcome", "switched_off"), ("variant", ""), ("shadow", "\(decision.campaign.shadow)"),
                ]
            ).increment()
            return RealtimeAnswer()
        }
        // Signed before it is recorded: a signing failure records nothing.
        let answer = try realtimeAnswer(decision.answer, realtime: realtime, appAccountToken: context.state?.appAccountToken, bundleId: app.bundleId)
        try await recorder.submit(
            .init(
                id: UUID(),
                subscriber: subscriber,
                requestIdentifier: realtime.requestIdentifier,
                productId: realtime.productId,
                decision: decision
            )
        )
        logger.debug(
            "cancel-sheet decision",
            metadata: [
                "campaign": "\(decision.campaign.id)", "outcome": "\(decision.outcome.rawValue)", "shadow": "\(decision.campaign.shadow)",
                "answer": "\(answer.kind)", "reason": "\(decision.reason)",
            ]
        )
        Counter(
            label: "reclaim_cancel_sheet_decisions_total",
            dimensions: [
                ("campaign", decision.campaign.id), ("outcome", decision.outcome.rawValue), ("variant", decision.variant?.id ?? ""),
                ("shadow", "\(decision.campaign.shadow)"),
            ]
        ).increment()
        return answer
    }

    /// An arm's answer as Apple reads it, its promotional offer signed now.
    private func realtimeAnswer(
        _ answer: CancelSheetAnswer?,
        realtime: RealtimeRequest,
        appAccountToken: UUID?,
        bundleId: String
    ) throws
        -> RealtimeAnswer
    {
        switch answer {
        case nil:
            return RealtimeAnswer()
        case .message(let id):
            return RealtimeAnswer(message: .init(messageIdentifier: id))
        case .switchTo(let product, let id, let plan):
            return RealtimeAnswer(alternateProduct: .init(messageIdentifier: id, productId: product, billingPlanType: plan?.rawValue))
        case .offer(let product, let offer, let id, let format):
            guard
                let signature = try issuer.cancelSheetSignature(
                    bundleId: bundleId,
                    productId: product,
                    offerIdentifier: offer,
                    format: format,
                    transactionId: realtime.originalTransactionId,
                    appAccountToken: appAccountToken
                )
            else { return RealtimeAnswer() }
            return RealtimeAnswer(promotionalOffer: .init(messageIdentifier: id, signature: signature, productId: product, offerIdentifier: offer))
        }
    }

    /// No cancel-sheet campaign decided: the live offer a notification campaign or a grant gave the subscriber, with
    /// its message; else the app's default message; else nothing.
    private func fallback(
        _ realtime: RealtimeRequest,
        for subscriber: SubscriberKey,
        app: ReclaimConfig.App,
        logger: Logger
    ) async throws
        -> RealtimeAnswer
    {
        // A grant names its own message, or takes its campaign label's.
        let live = try await postgres.withConnection(logger: logger) {
            try await OfferStore.liveOfferWithGrantMessage(of: subscriber, connection: $0, logger: logger)
        }
        let offer = live?.offer
        let messageIdentifier =
            live?.grantMessage ?? offer.flatMap { offer in config.campaigns.first { $0.id == offer.campaignId }?.messageIdentifier }
        if let offer, let messageIdentifier, let jws = try issuer.retentionSignature(for: offer, transactionId: realtime.originalTransactionId) {
            return RealtimeAnswer(
                promotionalOffer: .init(
                    messageIdentifier: messageIdentifier,
                    signature: .v2(jws),
                    productId: offer.productId,
                    offerIdentifier: offer.offerIdentifier
                )
            )
        }
        return RealtimeAnswer(message: app.defaultMessageIdentifier.map(RealtimeAnswer.Message.init))
    }
}
