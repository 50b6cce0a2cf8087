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
///   own fallback runs. Each decision is recorded in `reclaim.cancel_sheet_decisions`; of concurrent requests for one
///   subscriber, one makes the first decision and the others repeat it (``CancelSheetStore/record(_:connection:logger:)``).
/// - When none decides, the subscriber's live offer, when its grant or its campaign names a `messageIdentifier`,
///   as a promotional offer signed now; otherwise the app's `defaultMessageIdentifier`, or nothing.
/// - ``budget`` bounds the whole answer from the request's arrival: verification, a pooled connection, the decision,
///   its signature and its record. Past it the answer is `{}` at once (``DeadlineRace``), and a decision recorded as
///   answered is one whose answer left. Apple: "If your server response fails for any reason, the system displays a
///   default retention message that you configure in advance." `{}` says the same without Apple waiting for its
///   deadline.
public struct RetentionMessaging: Sendable {
    let verifier: AppleJWSVerifier
    let config: ReclaimConfig
    let campaigns: [CancelSheetCampaign]
    let postgres: Database
    let issuer: OfferIssuer
    /// Records decisions by group commit; each output says whether its record was inserted.
    let recorder: CommitBatcher<CancelSheetStore.Record, Bool>
    /// Marks a recorded decision `too_late` when its answer missed the budget, until the mark lands.
    let tooLate: TooLateMarks
    /// The whole answer's budget, from the request's arrival (`server.retentionBudgetMilliseconds`). Apple's
    /// performance test of the realtime URL: the server must respond "within approximately 700 ms".
    var budget: Duration = .milliseconds(300)
    let now: @Sendable () -> Date
    /// The apps stopped (`reclaim stop`): their cancel sheet is answered `{}`, Apple's own, and counted on the stop.
    var stops: AppStops?

    public init(
        verifier: AppleJWSVerifier,
        config: ReclaimConfig,
        campaigns: [CancelSheetCampaign],
        postgres: Database,
        issuer: OfferIssuer,
        recorder: CommitBatcher<CancelSheetStore.Record, Bool>,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.config = config
        self.campaigns = campaigns
        self.postgres = postgres
        self.issuer = issuer
        self.recorder = recorder
        self.tooLate = TooLateMarks(postgres: postgres, logger: Logger(label: "reclaim.retention"))
        self.now = now
    }

    /// Verifies `signedPayload` and answers it, within ``budget`` of `arrival`; a refusal when it does not verify.
    func answer(signedPayload: String, arrivedAt arrival: ContinuousClock.Instant, logger: Logger) async -> Result<RealtimeAnswer, IngestRefusal> {
        let deadline = arrival + budget
        let outcome = await DeadlineRace<Result<RealtimeAnswer, any Error>>.run(until: deadline) { race in
            do {
                let realtime = try await verifier.verifyRealtimeRequest(signedPayload)
                return .success(try await answer(realtime, race: race, deadline: deadline, logger: logger))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .finished(.success(let answer)):
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", answer.kind)]).increment()
            return .success(answer)
        case .finished(.failure(let error as JWSVerificationError)):
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "refused")]).increment()
            return .failure(IngestRefusal(error))
        case .finished(.failure(let error)):
            return unavailable(because: "\(error)", logger: logger)
        case .expired:
            return unavailable(because: "no answer within the budget", logger: logger)
        }
    }

    /// `{}`: the database failed or the budget passed.
    private func unavailable(because reason: String, logger: Logger) -> Result<RealtimeAnswer, IngestRefusal> {
        Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "unavailable")]).increment()
        logger.warning("retention request answered {}", metadata: ["reason": "\(reason)", "budget": "\(budget)"])
        return .success(RealtimeAnswer())
    }

    /// How far a realtime request's `signedDate` may be from now: further, it is a replay (or a clock Reclaim cannot
    /// trust) and is answered `{}`, recording nothing. Apple's `signedDate`: "The UNIX time, in milliseconds, that the
    /// App Store signed the JSON Web Signature data"; Apple waits about 700 ms for the answer, so a genuine request
    /// is seconds old at most.
    static let replayWindow: TimeInterval = 300

    /// The answer to a verified request.
    private func answer(
        _ realtime: RealtimeRequest,
        race: DeadlineRace<Result<RealtimeAnswer, any Error>>,
        deadline: ContinuousClock.Instant,
        logger: Logger
    ) async throws -> RealtimeAnswer {
        let age = now().timeIntervalSince(Date(unixMilliseconds: realtime.signedDate))
        guard abs(age) <= Self.replayWindow else {
            Counter(label: "reclaim_retention_replays_total", dimensions: [("kind", "stale")]).increment()
            logger.notice(
                "retention request signed too far from now: answered {} and not recorded (a replay?)",
                metadata: ["requestIdentifier": "\(realtime.requestIdentifier)", "ageSeconds": "\(Int(age))"]
            )
            return RealtimeAnswer()
        }
        let environment = realtime.environment.rawValue
        guard let app = config.apps.first(where: { $0.appAppleId == realtime.appAppleId && $0.environments.contains(environment) }) else {
            logger.notice(
                "retention request for no configured app",
                metadata: ["appAppleId": "\(realtime.appAppleId)", "environment": "\(environment)"]
            )
            return RealtimeAnswer()
        }
        if let stop = await stops?.stop(of: app.bundleId, logger: logger) {
            // Stopped: nothing of Reclaim's, and no decision recorded (a first decision made now would stand after the
            // resume); the stop counts what it answered {}.
            AppStops.held("cancel_sheet", bundleId: app.bundleId)
            Counter(label: "reclaim_retention_requests_total", dimensions: [("answer", "stopped")]).increment()
            logger.notice("retention request of a stopped app answered {}", metadata: ["app": "\(app.bundleId)", "stop": "\(stop.id)"])
            try await postgres.withConnection(logger: logger) {
                try await AppStopStore.note(.cancelSheet, bundleId: app.bundleId, connection: $0, logger: logger)
            }
            return RealtimeAnswer()
        }
        let subscriber = SubscriberKey(bundleId: app.bundleId, environment: environment, originalTransactionId: realtime.originalTransactionId)
        let appCampaigns = campaigns.filter { $0.bundleId == app.bundleId }
        guard !appCampaigns.isEmpty else { return try await fallback(realtime, for: subscriber, app: app, logger: logger) }
        // A first decision another request recorded meanwhile is read again and repeated; twice is already rare.
        for _ in 0..<3 {
            if let answer = try await decide(
                realtime,
                for: subscriber,
                app: app,
                campaigns: appCampaigns,
                race: race,
                deadline: deadline,
                logger: logger
            ) {
                return answer
            }
        }
        throw CancelSheetRecordContended(requestIdentifier: realtime.requestIdentifier)
    }

    /// The cancel-sheet campaigns' answer, recorded; nil when another request's first decision was recorded before
    /// this one's (read again, it is repeated).
    private func decide(
        _ realtime: RealtimeRequest,
        for subscriber: SubscriberKey,
        app: ReclaimConfig.App,
        campaigns appCampaigns: [CancelSheetCampaign],
        race: DeadlineRace<Result<RealtimeAnswer, any Error>>,
        deadline: ContinuousClock.Instant,
        logger: Logger
    ) async throws
        -> RealtimeAnswer?
    {
        let context = try await postgres.withConnection(logger: logger) {
            try await CancelSheetStore.context(of: subscriber, requestIdentifier: realtime.requestIdentifier, connection: $0, logger: logger)
        }
        if context.forgotten {
            // Forgotten on request (docs/privacy.md): no campaign contacts them again, and nothing about them is kept.
            Counter(label: "reclaim_forgotten_inputs_total", dimensions: [("input", "retention_request")]).increment()
            return RealtimeAnswer()
        }
        if context.state?.consentRescindedAt != nil {
            // A parent or guardian withdrew consent for the app (RESCIND_CONSENT): Apple's own sheet, nothing recorded.
            return RealtimeAnswer()
        }
        if let recorded = context.recorded {
            // The same request again (Apple's retry, or a replay): the answer recorded for it, nothing recorded anew.
            Counter(label: "reclaim_retention_replays_total", dimensions: [("kind", "repeated")]).increment()
            return try replayed(
                recorded,
                realtime: realtime,
                campaigns: appCampaigns,
                appAccountToken: context.state?.appAccountToken,
                bundleId: app.bundleId
            )
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
        let record = CancelSheetStore.Record(
            id: UUID(),
            subscriber: subscriber,
            requestIdentifier: realtime.requestIdentifier,
            productId: realtime.productId,
            decision: decision,
            deadline: deadline,
            billingPlanType: context.state?.billingPlanType
        )
        guard try await recorder.submit(record) else {
            // Not inserted: past its deadline (then the race has answered {}), or another request's first decision
            // after the same one came first.
            if ContinuousClock.now >= deadline { throw RetentionBudgetPassed() }
            return nil
        }
        // The holdout, a shadow or a held-back arm answer {} whatever the time: their record is true either way.
        if decision.answer != nil, !race.commit() {
            // The budget answered {} while the record committed: it must not say Apple saw the arm.
            tooLate.mark(record.id)
            throw RetentionBudgetPassed()
        }
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

    /// The answer recorded for a request, given again: `{}` unless it was answered (not a shadow's); a promotional offer
    /// signed anew (a signature's nonce serves one purchase), in the format its campaign's arm asks for.
    private func replayed(
        _ recorded: CancelSheetStore.RecordedAnswer,
        realtime: RealtimeRequest,
        campaigns appCampaigns: [CancelSheetCampaign],
        appAccountToken: UUID?,
        bundleId: String
    ) throws -> RealtimeAnswer {
        guard recorded.outcome == CancelSheetDecision.Outcome.answered.rawValue, !recorded.shadow, let message = recorded.messageIdentifier else {
            return RealtimeAnswer()
        }
        let arm = appCampaigns.first { $0.id == recorded.campaignId }?.variants.first { ($0.id.isEmpty ? nil : $0.id) == recorded.variantId }?.answer
        let answer: CancelSheetAnswer?
        switch recorded.answer {
        case "message": answer = .message(messageIdentifier: message)
        case "alternate_product":
            guard let product = recorded.answerProductId else { return RealtimeAnswer() }
            var plan: CancelSheetAnswer.BillingPlanType?
            if case .switchTo(_, _, let armPlan)? = arm { plan = armPlan }
            answer = .switchTo(productId: product, messageIdentifier: message, billingPlanType: plan)
        case "promotional_offer":
            guard let product = recorded.answerProductId, let offer = recorded.offerIdentifier else { return RealtimeAnswer() }
            var format = CancelSheetAnswer.OfferSignatureFormat.v2
            if case .offer(_, _, _, let armFormat)? = arm { format = armFormat }
            answer = .offer(productId: product, offerIdentifier: offer, messageIdentifier: message, signature: format)
        default: answer = nil
        }
        return try realtimeAnswer(answer, realtime: realtime, appAccountToken: appAccountToken, bundleId: bundleId)
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

/// Three requests' first decisions for one subscriber were each recorded before this request's: answered `{}`.
struct CancelSheetRecordContended: Error, CustomStringConvertible {
    let requestIdentifier: String
    var description: String { "request \(requestIdentifier): other requests' first decisions were recorded first three times" }
}

/// The budget passed while the decision was recorded: the answer left as `{}`.
struct RetentionBudgetPassed: Error, CustomStringConvertible {
    var description: String { "the budget passed while the decision was recorded" }
}
