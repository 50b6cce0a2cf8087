import Logging
import NIOCore
import ReclaimStore
import Synchronization

/// Paces App Store Server API requests per app, environment and endpoint, for every caller of this process and,
/// through ``ApplePaceStore``, for every Reclaim process on the same database (docs/decisions/0006).
///
/// Requests start at slots `1/(share × rate)` apart: no burst above the rate in any second, as Apple's limits are
/// given ("expressed in requests per second"; "The system enforces rate limits on an hourly basis"). The share kept
/// back (5%, and at least one request a second below 20 a second) absorbs jitter: at exactly the rate, a request
/// delayed a millisecond less than the one a rate's worth of slots before it puts one too many in a second, and a
/// slot's time carries the error of the database round trip that reserved it. A lane reserves slots in one statement
/// and hands them to its waiters; a slot more than one interval in the past is dropped rather than sent late beside
/// the next. A 429 pauses the lane until its `Retry-After`, here at once and in the database for the other
/// processes, whose slots already reserved may still go.
///
/// The database's round trip sets the reservations' shape, so that slots reach the lane before their time at any
/// latency (a slow link to PostgreSQL once made every reserved slot stale on arrival: nothing was sent). A batch
/// starts no earlier than one round trip after the database's now, and spans the longer of a quarter second and two
/// round trips; the next batch is reserved while the lane still holds a round trip and a quarter of slots, so a busy
/// lane never runs dry waiting for the database. Without a database (`reclaim campaigns check`) the lanes pace this
/// process alone.
public final class AppleAPIPacer: Sendable {
    let database: Database?
    let logger: Logger
    private let lanes = Mutex<[Lane.Key: Lane]>([:])

    public init(database: Database?, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The lane of one app, environment and endpoint at `rate` requests a second.
    func lane(bundleId: String, environment: String, endpoint: AppleEndpoint, rate: Double) -> Lane {
        let key = Lane.Key(bundleId: bundleId, environment: environment, endpoint: endpoint.rawValue)
        return lanes.withLock { lanes in
            if let lane = lanes[key], lane.rate == rate { return lane }
            let lane = Lane(key: key, rate: rate, database: database, logger: logger)
            lanes[key] = lane
            return lane
        }
    }

    /// 429s met by this process, per endpoint identifier.
    public var rateLimited: [String: Int] {
        lanes.withLock { lanes in
            var counts: [String: Int] = [:]
            for (key, lane) in lanes { counts[key.endpoint, default: 0] += lane.rateLimitedCount }
            return counts
        }
    }

    final class Lane: Sendable {
        struct Key: Hashable, Sendable {
            let bundleId: String
            let environment: String
            let endpoint: String
        }

        /// The share of Apple's rate a lane paces at: 95%, and one request a second less than the rate when that is
        /// lower (4 of Sandbox's 5 a second), so that a second holds a whole slot's margin.
        static func share(of rate: Double) -> Double {
            rate >= 2 ? min(0.95, (rate - 1) / rate) : 0.95
        }

        let key: Key
        let rate: Double
        let interval: Duration
        /// Slots reserved at once at least: a quarter second's worth, so a lane asks the database at most about four
        /// times a second.
        let batch: Int
        let database: Database?
        let logger: Logger
        private let state = Mutex(State())

        struct State {
            var slots = CircularBuffer<ContinuousClock.Instant>()
            var pausedUntil = ContinuousClock.now
            var localNext = ContinuousClock.now
            var reserving: Task<Void, any Error>?
            var rateLimited = 0
            /// When this process last started a request of the lane.
            var lastStart: ContinuousClock.Instant?
            /// The database's round trip, as the reservations measured it: rises at once, decays slowly.
            var roundTrip: Duration = .zero
            /// Slots the lane dropped because they were past when a caller reached them.
            var dropped = 0
        }

        /// Slots per reservation: a quarter second's, or two round trips' when the database is farther.
        func batchSize(roundTrip: Duration) -> Int {
            max(batch, Int(((roundTrip * 2) / interval).rounded(.up)))
        }

        init(key: Key, rate: Double, database: Database?, logger: Logger) {
            precondition(rate > 0, "a lane needs a positive rate")
            self.key = key
            self.rate = rate
            self.interval = .nanoseconds(Int64((1e9 / (rate * Self.share(of: rate))).rounded(.up)))
            self.batch = max(1, Int((rate / 4).rounded(.up)))
            self.database = database
            self.logger = logger
        }

        var rateLimitedCount: Int { state.withLock { $0.rateLimited } }

        /// Waits for this caller's slot.
        func acquire() async throws {
            while true {
                try Task.checkCancellation()
                enum Next {
                    case slot(ContinuousClock.Instant)
                    case wait(Task<Void, any Error>)
                }
                let next: Next = state.withLock { state in
                    let now = ContinuousClock.now
                    while let first = state.slots.first {
                        state.slots.removeFirst()
                        if first >= state.pausedUntil && first + interval >= now {
                            // Reserve the next batch while the lane still holds a round trip and a quarter of slots.
                            let horizon = state.slots.last ?? first
                            if state.reserving == nil, database != nil, horizon - now < state.roundTrip + state.roundTrip / 4 + interval {
                                state.reserving = Task { try await self.reserve() }
                            }
                            return .slot(first)
                        }
                        state.dropped += 1
                    }
                    if let reserving = state.reserving { return .wait(reserving) }
                    let task = Task { try await self.reserve() }
                    state.reserving = task
                    return .wait(task)
                }
                switch next {
                case .wait(let task):
                    try await task.value
                case .slot(let slot):
                    try await Task.sleep(until: slot, tolerance: .milliseconds(1), clock: .continuous)
                    // A 429 met while this caller slept pauses it too: back for a slot after the pause. And callers
                    // that woke together after the process stalled (their slots passed while no thread ran them)
                    // still start an interval apart: a stall must not turn into a burst. A caller woken a little early
                    // beside the one before waits the difference (dropping its slot instead wasted two in five of
                    // them to timer jitter: `scripts/bench backfill` reached 60% of the budget).
                    let start = state.withLock { state -> ContinuousClock.Instant? in
                        let now = ContinuousClock.now
                        guard state.pausedUntil <= now else { return nil }
                        let start = max(now, state.lastStart.map { $0 + interval } ?? now)
                        state.lastStart = start
                        return start
                    }
                    guard let start else { continue }
                    if start > ContinuousClock.now { try await Task.sleep(until: start, tolerance: .milliseconds(1), clock: .continuous) }
                    return
                }
            }
        }

        /// Reserves the next batch of slots, in the database when there is one.
        private func reserve() async throws {
            defer { state.withLock { $0.reserving = nil } }
            let roundTrip = state.withLock { $0.roundTrip }
            let count = database == nil ? batch : batchSize(roundTrip: roundTrip)
            let first: ContinuousClock.Instant
            if let database {
                // The database's "now" fell somewhere within the round trip: its middle is the best local guess. The
                // first slot is a round trip past it, so the answer arrives before it does.
                let sent = ContinuousClock.now
                let delay = try await ApplePaceStore.reserve(
                    bundleId: key.bundleId,
                    environment: key.environment,
                    endpoint: key.endpoint,
                    count: count,
                    interval: interval,
                    lead: roundTrip,
                    database: database,
                    logger: logger
                )
                let answered = ContinuousClock.now
                let measured = answered - sent
                first = sent + measured / 2 + delay
                state.withLock { state in
                    state.roundTrip = max(measured, state.roundTrip * 0.9)
                    // Said only when the database is far (slots also pass unused when callers stop coming).
                    if measured > .milliseconds(250), state.dropped > 0 {
                        logger.notice(
                            "Apple API slots passed before use: the database's round trip is long; the lane reserves further ahead",
                            metadata: ["endpoint": "\(key.endpoint)", "roundTrip": "\(measured)", "dropped": "\(state.dropped)"]
                        )
                        state.dropped = 0
                    }
                }
            } else {
                first = state.withLock { state in
                    let start = max(state.localNext, ContinuousClock.now, state.pausedUntil)
                    state.localNext = start + interval * count
                    return start
                }
            }
            state.withLock { state in
                for index in 0..<count { state.slots.append(first + interval * index) }
            }
        }

        /// A 429: no request of this lane before `delay` from now, in this process and (through the database) in
        /// every other.
        func pause(for delay: Duration) async {
            state.withLock { state in
                state.rateLimited += 1
                state.pausedUntil = max(state.pausedUntil, ContinuousClock.now + delay)
                state.slots.removeAll()
            }
            guard let database else { return }
            do {
                try await ApplePaceStore.pause(
                    bundleId: key.bundleId,
                    environment: key.environment,
                    endpoint: key.endpoint,
                    for: delay,
                    database: database,
                    logger: logger
                )
            } catch {
                // This process pauses regardless; the others meet their own 429 and pause then.
                logger.warning("could not share a 429's pause with other processes", metadata: ["endpoint": "\(key.endpoint)", "error": "\(error)"])
            }
        }
    }
}
