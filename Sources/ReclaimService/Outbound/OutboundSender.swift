import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import ReclaimStore
import ServiceLifecycle

/// Sends the outbound jobs (forwards and webhooks) of the worker role: one lane per target, each claiming only
/// its target's jobs and keeping up to `forwarding.concurrency` requests in flight, so a slow or dead target
/// delays nobody but itself: not ingest (which only queues), not the workers (whose claim skips outbound jobs),
/// not the other targets.
///
/// A job is completed after a 2xx answer; anything else (another status, a timeout, a refused connection) is
/// retried with exponential backoff and jitter (1 s, 2 s, 4 s, … at most an hour apart) until 72 hours after it
/// was queued, when it is dead (`reclaim jobs dead`). Delivery is at least once: a sender killed between the
/// answer and the completion sends again, with the same `X-Reclaim-Notification-UUID` or `webhook-id`.
struct OutboundSender: Service {
    let targets: [OutboundTarget]
    let postgres: Database
    let concurrency: Int
    /// `forwarding.allowPrivate`: targets may be private addresses (tests, internal receivers).
    var allowPrivate = false
    let pollInterval: Duration
    let backoff = Backoff(base: 1, cap: 3600)
    let logger: Logger
    let workerId = "\(ProcessInfo.processInfo.hostName):\(getpid()):outbound:\(UUID().uuidString.prefix(8))\(JobQueue.liveOwnerSuffix)"

    func run() async throws {
        guard !targets.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        let connections = targets.map {
            TargetConnection(host: $0.host, timeout: $0.timeout, concurrency: concurrency, allowPrivate: allowPrivate)
        }
        await Self.checkAddresses(connections, logger: logger)
        let signal = WakeUpSignal(needsOwnerLock: true)
        let stopping = Stopping()
        logger.info("outbound sender started", metadata: ["targets": "\(targets.count)", "worker": "\(workerId)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { background in
                background.addTask { await signal.listen(on: OutboundStore.channel, owner: workerId, postgres: postgres, logger: logger) }
                await withTaskGroup(of: Void.self) { lanes in
                    for (target, connection) in zip(targets, connections) {
                        lanes.addTask { await lane(target, connection: connection, signal: signal, stopping: stopping) }
                    }
                }
                background.cancelAll()
            }
        } onGracefulShutdown: {
            stopping.stop()
            signal.wakeAll()
        }
        for connection in connections { await connection.shutdown() }
        do {
            try await JobQueue(postgres: postgres).release(worker: workerId, logger: logger)
        } catch {
            logger.warning("could not release unsent outbound jobs; the rescuer will", metadata: ["error": "\(error)"])
        }
    }

    private enum Finished {
        /// A send ended: answered 2xx (to complete), or not (its failure was recorded).
        case send(OutboundStore.Job, answered: Bool)
        case wakeUp
    }

    /// One target: keep up to `concurrency` sends in flight, each in a task of its own, from a local queue that is
    /// refilled by one claim of up to ``claimAhead(concurrency:)`` jobs when it runs dry; complete the sent jobs
    /// together, one statement for many, before each claim, when ``completeAfter(concurrency:)`` of them wait, and
    /// when the lane falls idle. Between claims new jobs are announced by NOTIFY, or found at the poll interval.
    private func lane(_ target: OutboundTarget, connection: TargetConnection, signal: WakeUpSignal, stopping: Stopping) async {
        let metrics = OutboundMetrics(target)
        let claimAhead = Self.claimAhead(concurrency: concurrency)
        let completeAfter = Self.completeAfter(concurrency: concurrency)
        // A claimed job may wait behind the whole local queue's sends (`concurrency` at a time, each bounded by the
        // timeout) before its own; a killed sender's jobs return long before this, through its owner lock.
        let rounds = (claimAhead + concurrency - 1) / concurrency + 1
        let lease = target.timeout * rounds + .seconds(30)
        await withTaskGroup(of: Finished.self) { group in
            var queued: [OutboundStore.Job] = []
            var sent: [OutboundStore.Job] = []
            var sending: Set<Int64> = []
            var inFlight: Int { sending.count }
            var waiting = false
            /// A claim failed on this side: PostgreSQL may have committed it anyway, marking jobs nobody here holds.
            var claimLost = false
            func complete() async {
                guard !sent.isEmpty else { return }
                do {
                    let jobs = sent
                    try await postgres.withConnection(logger: logger) {
                        try await OutboundStore.complete(jobs, worker: workerId, connection: $0, logger: logger)
                    }
                    sent.removeAll()
                } catch {
                    // Sent, not recorded yet: kept and completed with the next ones (still this worker's, unless
                    // their lease ran out meanwhile, when they are sent again: at least once).
                    logger.warning(
                        "could not complete sent outbound jobs; will try again",
                        metadata: ["jobs": "\(sent.count)", "error": "\(String(reflecting: error))"]
                    )
                }
            }
            while !stopping.isStopping && !Task.isCancelled {
                let generation = signal.generation
                if queued.isEmpty && inFlight < concurrency && signal.mayClaim {
                    await complete()
                    do {
                        if claimLost {
                            let held = Array(sending) + sent.map(\.id)
                            try await JobQueue(postgres: postgres).releaseUnheld(worker: workerId, holding: held, target: target.id, logger: logger)
                            claimLost = false
                        }
                        let limit = claimAhead - inFlight
                        queued = try await postgres.withConnection(logger: logger) {
                            try await OutboundStore.claim(
                                target: target.id,
                                limit: limit,
                                worker: workerId,
                                lease: lease,
                                connection: $0,
                                logger: logger
                            )
                        }
                    } catch {
                        claimLost = true
                        logger.warning(
                            "could not claim outbound jobs",
                            metadata: ["target": "\(target.shownURL)", "error": "\(String(reflecting: error))"]
                        )
                    }
                }
                while inFlight < concurrency, !queued.isEmpty {
                    let job = queued.removeFirst()
                    sending.insert(job.id)
                    group.addTask { .send(job, answered: await send(job, to: target, connection: connection, metrics: metrics)) }
                }
                if queued.isEmpty && inFlight < concurrency && !waiting {
                    // Falling idle: what was sent is recorded now, not at the next claim.
                    if inFlight == 0 { await complete() }
                    waiting = true
                    group.addTask {
                        await signal.wait(after: generation, timeout: pollInterval)
                        return .wakeUp
                    }
                }
                switch await group.next() {
                case .send(let job, let answered)?:
                    sending.remove(job.id)
                    if answered { sent.append(job) }
                    if sent.count >= completeAfter { await complete() }
                case .wakeUp?: waiting = false
                case nil: return
                }
            }
            // Shutting down: the sends in flight finish (each bounded by its timeout); the waiter was woken. What was
            // claimed but not started is released by the caller.
            for await finished in group {
                if case .send(let job, true) = finished { sent.append(job) }
            }
            await complete()
        }
    }

    /// Jobs claimed at once: twice `concurrency`, and at least 64. Per job, a claim and a completion cost PostgreSQL
    /// and this process about the same whatever their size, so batches larger than the requests in flight make
    /// each forward cheaper (`scripts/bench forward-drain` at concurrency 8: 245 µs of this process and 193 µs of
    /// PostgreSQL per forward with claims of 16 and completions of 8).
    static func claimAhead(concurrency: Int) -> Int { max(2 * concurrency, 64) }

    /// Sent jobs completed together: `concurrency`, and at least 32.
    static func completeAfter(concurrency: Int) -> Int { max(concurrency, 32) }

    /// Sends one job; true when it was answered 2xx (the lane completes it), false when its failure was recorded.
    private func send(_ job: OutboundStore.Job, to target: OutboundTarget, connection: TargetConnection, metrics: OutboundMetrics) async -> Bool {
        let started = ContinuousClock.now
        let failure: String
        var retry = true
        do {
            let request = try OutboundRequest.make(job, target: target)
            let status = try await connection.withClient { http in
                try await Self.exchange(request, http: http, timeout: target.timeout)
            }
            metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            if (200..<300).contains(status) {
                metrics.sent.increment()
                return true
            }
            failure = "HTTP \(status) from \(target.shownURL)"
        } catch let error as TargetConnection.Refused {
            failure = "\(error.description) (\(target.shownURL))"
        } catch let error as OutboundRequest.NotForwarded {
            // Done, with nothing sent (docs/privacy.md, forwardForgotten): completed as a delivered one is.
            Counter(label: "reclaim_forgotten_inputs_total", dimensions: [("input", "forward")]).increment()
            logger.notice("\(error.description)", metadata: ["job": "\(job.id)", "target": "\(target.shownURL)"])
            return true
        } catch let error as OutboundRequest.Unsendable {
            // No retry can help (the notification was pruned): dead now, listed by `reclaim jobs dead`.
            failure = error.description
            retry = false
        } catch {
            metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            failure = "\(Self.describe(error)) sending to \(target.shownURL)"
        }
        metrics.failed.increment()
        let delay = retry ? backoff.delay(afterAttempt: job.attempt, unit: Double.random(in: 0..<1)) : OutboundStore.retryWindow + 1
        do {
            let state = try await postgres.withConnection(logger: logger) {
                try await OutboundStore.fail(job, worker: workerId, error: failure, retryDelay: delay, connection: $0, logger: logger)
            }
            if state == .dead {
                metrics.dead.increment()
                logger.error("outbound job dead (failed for 72 hours, or unsendable)", metadata: ["job": "\(job.id)", "error": "\(failure)"])
            } else if state == .retryable {
                metrics.retried.increment()
                logger.notice(
                    "outbound send failed; will retry",
                    metadata: ["job": "\(job.id)", "attempt": "\(job.attempt)", "retryIn": "\(Int(delay))s", "error": "\(failure)"]
                )
            }
        } catch {
            logger.warning("could not record a failed outbound send", metadata: ["job": "\(job.id)", "error": "\(String(reflecting: error))"])
        }
        return false
    }

    /// One request and its answer, the answer's body included, within `timeout`: AsyncHTTPClient's deadline ends
    /// at the answer's head and its read timeout restarts with every byte, so a receiver that answers and then
    /// trickles its body a byte at a time would hold the send (and one of the target's connections) for as long
    /// as it liked. The body is read so the connection can be reused, and ignored; a large one is cut short.
    static func exchange(_ request: HTTPClientRequest, http: HTTPClient, timeout: Duration) async throws -> UInt {
        try await withThrowingTaskGroup(of: UInt?.self) { group in
            group.addTask {
                let response = try await http.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
                _ = try await response.body.collect(upTo: 64 * 1024)
                return response.status.code
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let status = first else { throw HTTPClientError.deadlineExceeded }
            return status
        }
    }

    /// Resolves and checks every target's host before the first send. Neither outcome stops the server: ingest and
    /// the other targets never wait on one receiver's DNS. A name that does not resolve is a warning (its sends fail
    /// and are retried until it does); a private answer is an error, and its sends are refused (and retried, so
    /// they go once the name resolves to a public address).
    static func checkAddresses(_ connections: [TargetConnection], logger: Logger) async {
        await withTaskGroup(of: (String, TargetConnection.Refused?).self) { group in
            for connection in connections {
                group.addTask { (connection.host, await connection.check()) }
            }
            for await (host, refused) in group {
                guard let refused else { continue }
                let metadata: Logger.Metadata = ["host": "\(host)", "problem": "\(refused.description)"]
                if refused.isPrivateAnswer {
                    logger.error("outbound target refused: its name resolves to a private address", metadata: metadata)
                } else {
                    logger.warning("outbound target does not resolve yet; its sends are retried", metadata: metadata)
                }
            }
        }
    }

    /// An error in words for `last_error`, without the request (whose headers may hold a token).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            // shortDescription carries no associated value: some quote the request's header values, which may be tokens.
            default: return "HTTP client error (\(error.shortDescription))"
            }
        }
        return "\(error)"
    }
}
