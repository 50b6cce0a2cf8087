import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CancelFlow {
    /// A step of the flow as Reclaim records it (`POST /v1/cancel-flow/events`), for the funnel.
    public enum Step: String, Sendable, Hashable, CaseIterable {
        case surveySkipped = "survey_skipped"
        case answerShown = "answer_shown"
        case accepted
        case declined
        case purchased
        case purchasePending = "purchase_pending"
        case purchaseFailed = "purchase_failed"
        case manageOpened = "manage_opened"
        case refundOpened = "refund_opened"
        /// Where no sheet opened: Apple's subscriptions page.
        case fallbackOpened = "fallback_opened"
    }
}

extension ReclaimClient {
    /// Reclaim's answer to the cancel intent within `deadline`, or nothing to show: never an error. With an
    /// appAccountToken it is sent with the user token, as `GET /v1/offers` is; a signed transaction is its own proof,
    /// as for `POST /v1/offers/lookup`.
    func cancelFlowAnswer(
        subscriber: CancelFlow.Subscriber?,
        reason: String?,
        canShow: Set<CancelFlow.AnswerKind>,
        deadline: TimeInterval
    ) async -> CancelFlow.Answer {
        guard let subscriber else { return .nothing(reason: reason) }
        // Not a task group: a group waits for every child, and a request stuck where cancellation is not heard (the
        // app's user-token closure, say) would hold the subscriber past the deadline. The first to finish answers; the
        // other is cancelled and not waited for.
        let race = FirstAnswer()
        let seconds = deadline.isNaN ? 0 : min(max(0, deadline), 3600)
        let answered = await withCheckedContinuation { continuation in
            race.wait(continuation)
            let request = Task { [self] in
                race.finish(try? await startCancelFlow(subscriber: subscriber, reason: reason, canShow: canShow))
            }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                race.finish(nil)
                request.cancel()
            }
        }
        return answered ?? .nothing(reason: reason)
    }

    /// `POST /v1/cancel-flow`.
    func startCancelFlow(
        subscriber: CancelFlow.Subscriber,
        reason: String?,
        canShow: Set<CancelFlow.AnswerKind>
    ) async throws -> CancelFlow.Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/cancel-flow"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(CancelFlow.StartBody(subscriber: subscriber, reason: reason, canShow: canShow))
        let data: Data
        switch subscriber {
        case .appAccountToken: data = try await sendWithUserToken(request)
        case .signedTransaction: data = try await send(request)
        }
        do {
            return try JSONDecoder().decode(CancelFlow.StartAnswer.self, from: data).answer(canShow: canShow, subscriber: subscriber, reason: reason)
        } catch {
            throw ReclaimClientError.invalidResponse("the cancel flow's answer does not decode: \(error)")
        }
    }

    /// Reports `step` in the background, after the events reported before it; a failure is dropped (the funnel only).
    func recordInOrder(_ step: CancelFlow.Step, flowId: UUID?, errorText: String?) {
        eventQueue.append { [self] in try? await record(step, flowId: flowId, errorText: errorText) }
    }

    /// `POST /v1/cancel-flow/events`, with the app key alone: the event names the flow, not the user.
    func record(_ step: CancelFlow.Step, flowId: UUID?, errorText: String?) async throws {
        struct Body: Encodable {
            let flowId: String?
            let step: String
            let error: String?
        }
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/cancel-flow/events"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(Body(flowId: flowId?.uuidString.lowercased(), step: step.rawValue, error: errorText))
        _ = try await send(request)
    }
}

/// The first of two answers, given once: the request's or the deadline's.
final class FirstAnswer: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<CancelFlow.Answer?, Never>?

    func wait(_ continuation: CheckedContinuation<CancelFlow.Answer?, Never>) {
        lock.lock()
        defer { lock.unlock() }
        self.continuation = continuation
    }

    func finish(_ answer: CancelFlow.Answer?) {
        lock.lock()
        let waiting = continuation
        continuation = nil
        lock.unlock()
        waiting?.resume(returning: answer)
    }
}
