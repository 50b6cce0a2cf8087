import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimStore
import ServiceLifecycle
import Synchronization

/// Runs queued jobs: a `Service` with a bounded number of lanes, each claiming a batch, running
/// the batch's handlers and completing it in one transaction; and, for each kind of job that calls another service
/// (``CallingJobHandler``: refund answers to Apple), `callConcurrency` call lanes running one such job at a time,
/// outside any transaction, so a slow Apple never holds a batch, a connection or another job.
///
/// - Wake-up: a LISTEN connection wakes idle lanes within milliseconds of an enqueue's commit;
///   a slow poll covers a lost notification or connection.
/// - Exactly once: effects and completion commit together; see `JobQueue`.
/// - Failures: if any handler of a batch throws, the batch's transaction rolls back and each of
///   its jobs runs again in a transaction of its own, so one bad job fails alone.
/// - Shutdown: lanes finish their batch and stop; after `shutdownTimeout` they are cancelled
///   (their transactions roll back) and the pool's unfinished jobs are released at once.
public struct WorkerPool: Service {
    public struct Options: Sendable {
        public var concurrency: Int
        /// Call lanes per calling job kind: that kind's jobs run at most this many at once.
        public var callConcurrency: Int
        public var batchSize: Int
        public var pollInterval: Duration
        public var lease: Duration
        public var shutdownTimeout: Duration
        public var backoff: Backoff

        public init(
            concurrency: Int = 8,
            callConcurrency: Int = 4,
            batchSize: Int = 64,
            pollInterval: Duration = .seconds(2),
            lease: Duration = .seconds(60),
            shutdownTimeout: Duration = .seconds(30),
            backoff: Backoff = Backoff()
        ) {
            self.concurrency = concurrency
            self.callConcurrency = callConcurrency
            self.batchSize = batchSize
            self.pollInterval = pollInterval
            self.lease = lease
            self.shutdownTimeout = shutdownTimeout
            self.backoff = backoff
        }

        public init(_ config: ReclaimConfig.Worker) {
            self.init(
                concurrency: config.concurrency,
                callConcurrency: config.callConcurrency,
                batchSize: config.batchSize,
                pollInterval: config.pollInterval.duration,
                lease: config.lease.duration,
                shutdownTimeout: config.shutdownTimeout.duration
            )
        }
    }

    public let queue: JobQueue
    public let handlers: [String: any JobHandler]
    /// The kinds whose handlers call another service: claimed by their call lanes only.
    let callKinds: [String]
    public let options: Options
    /// Identifies this pool in `locked_by`: host, process and a random suffix.
    public let workerId: String
    let logger: Logger
    let metrics: WorkerMetrics
    /// Jobs whose handlers run now: the only ones the heartbeat keeps leased.
    let inFlight = InFlightJobs()
    /// Where each lane reports progress; `/healthz` fails when one stops moving.
    let liveness: Liveness

    public init(queue: JobQueue, handlers: [String: any JobHandler], options: Options, liveness: Liveness? = nil, logger: Logger) {
        self.queue = queue
        self.handlers = handlers
        self.callKinds = handlers.filter { $0.value is any CallingJobHandler }.keys.sorted()
        self.options = options
        self.workerId = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UUID().uuidString.prefix(8))\(JobQueue.liveOwnerSuffix)"
        self.logger = logger
        self.metrics = WorkerMetrics()
        self.liveness = liveness ?? Liveness(bound: .seconds(300))
    }

    private enum LaneResult { case laneFinished, shutdownTimedOut, timerCancelled }

    public func run() async throws {
        let signal = WakeUpSignal(needsOwnerLock: true)
        let stopping = Stopping()
        logger.info("worker pool started", metadata: ["worker": "\(workerId)", "lanes": "\(options.concurrency)"])
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { background in
                background.addTask { await signal.listen(on: JobQueue.channel, owner: workerId, postgres: queue.postgres, logger: logger) }
                background.addTask { await heartbeat() }
                await withTaskGroup(of: LaneResult.self) { lanes in
                    for _ in 0..<options.concurrency {
                        lanes.addTask {
                            await lane(signal: signal, stopping: stopping)
                            return .laneFinished
                        }
                    }
                    for kind in callKinds {
                        for _ in 0..<options.callConcurrency {
                            lanes.addTask {
                                await callLane(kind: kind, signal: signal, stopping: stopping)
                                return .laneFinished
                            }
                        }
                    }
                    let laneCount = options.concurrency + callKinds.count * options.callConcurrency
                    lanes.addTask {
                        await stopping.wait()
                        do {
                            try await Task.sleep(for: options.shutdownTimeout)
                            return .shutdownTimedOut
                        } catch {
                            return .timerCancelled
                        }
                    }
                    var finished = 0
                    for await result in lanes {
                        switch result {
                        case .laneFinished:
                            finished += 1
                            if finished == laneCount {
                                stopping.stop()  // releases the shutdown timer if the lanes ended by cancellation
                                lanes.cancelAll()
                            }
                        case .shutdownTimedOut:
                            // Which jobs (none: a lane was claiming), so that what held the shutdown can be looked up.
                            logger.warning(
                                "shutdown timeout: cancelling jobs still running",
                                metadata: ["worker": "\(workerId)", "jobs": "\(inFlight.current.sorted())"]
                            )
                            lanes.cancelAll()
                        case .timerCancelled:
                            break
                        }
                    }
                }
                background.cancelAll()
            }
        } onGracefulShutdown: {
            stopping.stop()
            signal.wakeAll()
        }
        do {
            let released = try await queue.release(worker: workerId, logger: logger)
            logger.info("worker pool stopped", metadata: ["worker": "\(workerId)", "released": "\(released)"])
        } catch {
            logger.warning("could not release unfinished jobs; the rescuer will", metadata: ["error": "\(error)"])
        }
    }

    /// One lane: claim a batch, run it, repeat; sleep until woken when the queue is empty. While it works, the
    /// lane reports progress after every database operation (``Liveness``).
    private func lane(signal: WakeUpSignal, stopping: Stopping) async {
        while !stopping.isStopping && !Task.isCancelled {
            let generation = signal.generation
            guard signal.mayClaim else {
                // Not until this process holds its owner lock: the rescuer would take what it claimed.
                await signal.wait(after: generation, timeout: options.pollInterval)
                continue
            }
            let step = liveness.begin("worker lane")
            let jobs: [Job]
            do {
                // A failure here sets the flag again below.
                if inFlight.claimLost.exchange(false, ordering: .acquiringAndReleasing) {
                    try await queue.releaseUnheld(worker: workerId, holding: inFlight.current, target: nil, logger: logger)
                }
                jobs = try await queue.claim(
                    limit: options.batchSize,
                    worker: workerId,
                    lease: options.lease,
                    excluding: callKinds,
                    logger: logger
                )
            } catch {
                inFlight.claimLost.store(true, ordering: .releasing)
                liveness.end(step)
                if !Task.isCancelled { logger.warning("claiming jobs failed", metadata: ["error": "\(String(reflecting: error))"]) }
                await signal.wait(after: generation &+ 1, timeout: options.pollInterval)
                continue
            }
            if jobs.isEmpty {
                liveness.end(step)
                await signal.wait(after: generation, timeout: options.pollInterval)
                continue
            }
            liveness.progress(step)
            let ids = jobs.map(\.id)
            inFlight.insert(ids)
            await runBatch(jobs, step: step)
            // Finished, failed or abandoned (its failure could not be recorded): either way no handler runs it now,
            // so the heartbeat lets its lease run out and the rescuer returns it if it is still `running`.
            inFlight.remove(ids)
            liveness.end(step)
        }
    }

    /// Runs a batch in one transaction; on any failure, runs its jobs one transaction each.
    func runBatch(_ jobs: [Job], step: Int? = nil) async {
        let started = ContinuousClock.now
        defer { if let step { liveness.progress(step) } }
        do {
            try await queue.postgres.transaction(logger: logger) { connection in
                let owned = try await JobQueue.markCompleted(jobs, worker: workerId, connection: connection, logger: logger)
                // Consecutive jobs of one kind go to their handler together, still in claim order.
                var run: [Job] = []
                for job in jobs where owned.contains(job.id) {
                    if let last = run.last, last.kind != job.kind {
                        try await handler(for: last).handle(batch: run, connection: connection, logger: logger)
                        run.removeAll()
                    }
                    run.append(job)
                }
                if let last = run.last { try await handler(for: last).handle(batch: run, connection: connection, logger: logger) }
            }
            metrics.completed(jobs, duration: ContinuousClock.now - started)
        } catch {
            if Task.isCancelled { return }
            if let step { liveness.progress(step) }
            for job in jobs {
                await runAlone(job)
                if let step { liveness.progress(step) }
            }
        }
    }

    /// One call lane: claim one job of `kind`, make its call outside any transaction, record the outcome with the
    /// job's completion; sleep until woken when none is due.
    private func callLane(kind: String, signal: WakeUpSignal, stopping: Stopping) async {
        guard let handler = handlers[kind] as? any CallingJobHandler else { return }
        while !stopping.isStopping && !Task.isCancelled {
            let generation = signal.generation
            guard signal.mayClaim else {
                await signal.wait(after: generation, timeout: options.pollInterval)
                continue
            }
            let job: Job?
            do {
                job = try await queue.claimCall(kind: kind, worker: workerId, lease: options.lease, logger: logger)
            } catch {
                inFlight.claimLost.store(true, ordering: .releasing)
                if !Task.isCancelled {
                    logger.warning("claiming a call job failed", metadata: ["kind": "\(kind)", "error": "\(String(reflecting: error))"])
                }
                await signal.wait(after: generation &+ 1, timeout: options.pollInterval)
                continue
            }
            guard let job else {
                await signal.wait(after: generation, timeout: options.pollInterval)
                continue
            }
            let step = liveness.begin("call lane")
            inFlight.insert([job.id])
            await runCall(job, handler: handler)
            inFlight.remove([job.id])
            liveness.end(step)
        }
    }

    /// Makes one job's call, then completes the job and records the outcome in one transaction; a failure is the
    /// job's alone.
    private func runCall(_ job: Job, handler: any CallingJobHandler) async {
        let started = ContinuousClock.now
        let jobLogger = logger(for: job)
        do {
            // The lease, less the time its completion needs: a call never waits for Apple's pacing past it.
            let lease = CallLease(job: job, worker: workerId, budget: max(.seconds(1), options.lease - .seconds(5)))
            let record = try await handler.call(job, lease: lease, database: queue.postgres, logger: jobLogger)
            try await queue.postgres.transaction(logger: jobLogger) { connection in
                let owned = try await JobQueue.markCompleted([job], worker: workerId, connection: connection, logger: jobLogger)
                guard owned.contains(job.id) else { return }
                try await record?(connection, jobLogger)
            }
            metrics.completed([job], duration: ContinuousClock.now - started)
        } catch let lost as CallLease.Lost {
            // Another lane holds it now and makes the call: nothing to record here.
            jobLogger.notice("\(lost.description)")
        } catch {
            if Task.isCancelled { return }
            await recordFailure(job, error: error, logger: jobLogger)
        }
    }

    private func logger(for job: Job) -> Logger {
        var logger = logger
        logger[metadataKey: "job"] = "\(job.id)"
        logger[metadataKey: "kind"] = "\(job.kind)"
        return logger
    }

    /// Runs one job in its own transaction and records its failure.
    private func runAlone(_ job: Job) async {
        let started = ContinuousClock.now
        let jobLogger = logger(for: job)
        do {
            try await queue.postgres.transaction(logger: jobLogger) { connection in
                let owned = try await JobQueue.markCompleted([job], worker: workerId, connection: connection, logger: jobLogger)
                guard owned.contains(job.id) else { return }
                try await handler(for: job).handle(job, connection: connection, logger: jobLogger)
            }
            metrics.completed([job], duration: ContinuousClock.now - started)
        } catch {
            if Task.isCancelled { return }
            await recordFailure(job, error: error, logger: jobLogger)
        }
    }

    /// A failed attempt: retried after the queue's backoff (or the delay a ``RetryLater`` asks for), dead after its
    /// last attempt.
    private func recordFailure(_ job: Job, error: any Error, logger jobLogger: Logger) async {
        let delay = (error as? RetryLater)?.delay.seconds ?? options.backoff.delay(afterAttempt: job.attempt, unit: Double.random(in: 0..<1))
        let message = String(describing: error)
        let state: JobState?
        do {
            state = try await queue.markFailed(job, worker: workerId, error: message, retryDelay: delay, logger: jobLogger)
        } catch {
            // The database is away (restarting, failing over): the job stays `running` until its lease runs out,
            // which the heartbeat no longer extends once this lane moves on; then the rescuer returns it.
            jobLogger.warning(
                "job failed and its failure could not be recorded; it runs again once its lease expires",
                metadata: ["error": "\(message)", "recordError": "\(String(reflecting: error))"]
            )
            return
        }
        metrics.failed(job, dead: state == .dead)
        if state == .dead {
            jobLogger.error("job dead after \(job.attempt) attempts", metadata: ["error": "\(message)"])
        } else {
            jobLogger.warning("job failed; retrying", metadata: ["error": "\(message)", "attempt": "\(job.attempt)", "retryIn": "\(delay)"])
        }
    }

    private func handler(for job: Job) throws -> any JobHandler {
        guard let handler = handlers[job.kind] else { throw UnknownJobKind(kind: job.kind) }
        return handler
    }

    /// Extends the leases of the jobs this pool's lanes are running every third of a lease, so long jobs are not
    /// rescued; never those of a job whose handler has stopped (``InFlightJobs``).
    private func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: options.lease / 3)
            if Task.isCancelled { return }
            let ids = inFlight.current
            if ids.isEmpty { continue }
            do {
                try await queue.heartbeat(jobs: ids, worker: workerId, lease: options.lease, logger: logger)
            } catch {
                if !Task.isCancelled { logger.warning("heartbeat failed", metadata: ["error": "\(String(reflecting: error))"]) }
            }
        }
    }
}
