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
    let pollInterval: Duration
    let backoff = Backoff(base: 1, cap: 3600)
    let logger: Logger
    let workerId = "\(ProcessInfo.processInfo.hostName):\(getpid()):outbound:\(UUID().uuidString.prefix(8))\(JobQueue.liveOwnerSuffix)"

    func run() async throws {
        guard !targets.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        let longest = targets.map(\.timeout).max() ?? .seconds(10)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(longest.components.seconds))
        )
        configuration.httpVersion = .automatic
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let signal = WakeUpSignal(needsOwnerLock: true)
        let stopping = Stopping()
        logger.info("outbound sender started", metadata: ["targets": "\(targets.count)", "worker": "\(workerId)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { background in
                background.addTask { await signal.listen(on: OutboundStore.channel, owner: workerId, postgres: postgres, logger: logger) }
                await withTaskGroup(of: Void.self) { lanes in
                    for target in targets {
                        lanes.addTask { await lane(target, http: http, signal: signal, stopping: stopping) }
                    }
                }
                background.cancelAll()
            }
        } onGracefulShutdown: {
            stopping.stop()
            signal.wakeAll()
        }
        try? await http.shutdown()
        do {
            try await JobQueue(postgres: postgres).release(worker: workerId, logger: logger)
        } catch {
            logger.warning("could not release unsent outbound jobs; the rescuer will", metadata: ["error": "\(error)"])
        }
    }

    private enum Finished { case send, wakeUp }

    /// One target: claim as many due jobs as there are free slots, send each in a task of its own, and claim again
    /// when a send finishes or new jobs are announced (NOTIFY) or the poll interval passes.
    private func lane(_ target: OutboundTarget, http: HTTPClient, signal: WakeUpSignal, stopping: Stopping) async {
        let metrics = OutboundMetrics(target)
        // Long enough for the request and its completion; a killed sender's jobs return sooner (its owner lock).
        let lease = target.timeout + .seconds(30)
        await withTaskGroup(of: Finished.self) { group in
            var inFlight = 0
            var waiting = false
            while !stopping.isStopping && !Task.isCancelled {
                let generation = signal.generation
                var claimed: [OutboundStore.Job] = []
                if inFlight < concurrency && signal.mayClaim {
                    do {
                        claimed = try await OutboundStore.claim(
                            target: target.id,
                            limit: concurrency - inFlight,
                            worker: workerId,
                            lease: lease,
                            postgres: postgres,
                            logger: logger
                        )
                    } catch {
                        logger.warning(
                            "could not claim outbound jobs",
                            metadata: ["target": "\(target.shownURL)", "error": "\(String(reflecting: error))"]
                        )
                    }
                }
                for job in claimed {
                    inFlight += 1
                    group.addTask {
                        await send(job, to: target, http: http, metrics: metrics)
                        return .send
                    }
                }
                if !claimed.isEmpty && inFlight < concurrency { continue }
                if !waiting {
                    waiting = true
                    group.addTask {
                        await signal.wait(after: generation, timeout: pollInterval)
                        return .wakeUp
                    }
                }
                switch await group.next() {
                case .send?: inFlight -= 1
                case .wakeUp?: waiting = false
                case nil: return
                }
            }
            // Shutting down: the sends in flight finish (each bounded by its timeout); the waiter was woken.
            for await _ in group {}
        }
    }

    private func send(_ job: OutboundStore.Job, to target: OutboundTarget, http: HTTPClient, metrics: OutboundMetrics) async {
        let started = ContinuousClock.now
        let failure: String
        do {
            let request = try OutboundRequest.make(job, target: target)
            let response = try await http.execute(request, timeout: .seconds(target.timeout.components.seconds))
            // The answer's body is read (so the connection can be reused) and ignored; a large one is cut short.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            if (200..<300).contains(response.status.code) {
                metrics.sent.increment()
                do {
                    try await OutboundStore.complete([job], worker: workerId, postgres: postgres, logger: logger)
                } catch {
                    // Sent, but not recorded: the rescuer returns it and it is sent again (at least once).
                    logger.warning("could not complete a sent outbound job", metadata: ["job": "\(job.id)", "error": "\(String(reflecting: error))"])
                }
                return
            }
            failure = "HTTP \(response.status.code) from \(target.shownURL)"
        } catch let error as OutboundRequest.Unsendable {
            failure = error.description
        } catch {
            metrics.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            failure = "\(Self.describe(error)) sending to \(target.shownURL)"
        }
        metrics.failed.increment()
        let delay = backoff.delay(afterAttempt: job.attempt, unit: Double.random(in: 0..<1))
        do {
            let state = try await OutboundStore.fail(job, worker: workerId, error: failure, retryDelay: delay, postgres: postgres, logger: logger)
            if state == .dead {
                metrics.dead.increment()
                logger.error("outbound job dead: its target failed for 72 hours", metadata: ["job": "\(job.id)", "error": "\(failure)"])
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
    }

    /// An error in words for `last_error`, without the request (whose headers may hold a token).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            default: return "HTTP client error (\(error))"
            }
        }
        return "\(error)"
    }
}
