import Logging
import PostgresNIO

/// `reclaim.apple_api_pace`: the App Store Server API's request slots, shared by every Reclaim process.
///
/// A lane (app, environment, endpoint) has one row. A process reserves `count` consecutive slots, `interval`
/// apart, by moving `next_slot` on in one statement; the row lock orders concurrent reservations, so no two
/// processes hold the same slot and all of them together start at most one request per `interval`. Times are the
/// database's: a reservation answers how far from *now* its first slot is, so no two machines' clocks are compared.
public enum ApplePaceStore {
    /// Reserves `count` slots, the first no earlier than `lead` from now (the caller's round trip to the database, so
    /// that the answer reaches it before its first slot); returns the delay from now to the first.
    public static func reserve(
        bundleId: String,
        environment: String,
        endpoint: String,
        count: Int,
        interval: Duration,
        lead: Duration = .zero,
        database: Database,
        logger: Logger
    ) async throws -> Duration {
        let span = interval.seconds * Double(count)
        let lead = lead.seconds
        // now() is the statement's start in this single-statement transaction, the same in every expression.
        let rows = try await database.query(
            """
            INSERT INTO reclaim.apple_api_pace AS p (bundle_id, environment, endpoint, next_slot)
            VALUES (\(bundleId), \(environment), \(endpoint), now() + make_interval(secs => \(lead + span)))
            ON CONFLICT (bundle_id, environment, endpoint) DO UPDATE
            SET next_slot = greatest(p.next_slot, now() + make_interval(secs => \(lead)), p.paused_until) + make_interval(secs => \(span))
            RETURNING extract(epoch FROM p.next_slot - now())::float8
            """,
            logger: logger
        )
        var end = span
        for try await value in rows.decode(Double.self) { end = value }
        return .milliseconds(max(0, ((end - span) * 1000).rounded()))
    }

    /// No slot of the lane before `delay` from now (a 429's `Retry-After`), for every process.
    public static func pause(
        bundleId: String,
        environment: String,
        endpoint: String,
        for delay: Duration,
        database: Database,
        logger: Logger
    ) async throws {
        let seconds = delay.seconds
        try await database.query(
            """
            INSERT INTO reclaim.apple_api_pace AS p (bundle_id, environment, endpoint, next_slot, paused_until)
            VALUES (\(bundleId), \(environment), \(endpoint), now() + make_interval(secs => \(seconds)), now() + make_interval(secs => \(seconds)))
            ON CONFLICT (bundle_id, environment, endpoint) DO UPDATE
            SET paused_until = greatest(p.paused_until, EXCLUDED.paused_until), next_slot = greatest(p.next_slot, EXCLUDED.paused_until)
            """,
            logger: logger
        )
    }
}
