import Foundation
import Logging
import PostgresNIO

/// `reclaim.app_stops`: one stop for a whole app (`reclaim stop`), read by every process (``AppStops`` in the service).
public enum AppStopStore {
    public struct Stop: Sendable, Equatable, Codable {
        public let id: Int64
        public let bundleId: String
        public let stoppedAt: Date
        public let stoppedBy: String
        public let reason: String
        public let cancelSheetAnsweredEmpty: Int
        public let refundAnswersExpired: Int
    }

    /// Stops `bundleId`; the stop in force (this one, or the one already there: stopping twice changes nothing).
    public static func stop(
        bundleId: String,
        reason: String,
        by actor: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (
        stop: Stop, new: Bool
    ) {
        let inserted = try await connection.query(
            """
            INSERT INTO reclaim.app_stops (bundle_id, reason, stopped_by) VALUES (\(bundleId), \(reason), \(actor))
            ON CONFLICT (bundle_id) WHERE resumed_at IS NULL DO NOTHING RETURNING id
            """,
            logger: logger
        )
        var new = false
        for try await _ in inserted { new = true }
        guard let stop = try await active(connection: connection, logger: logger).first(where: { $0.bundleId == bundleId }) else {
            preconditionFailure("a stop was just inserted or found")
        }
        return (stop, new)
    }

    /// Ends the stop of `bundleId`; nil when it was not stopped.
    public static func resume(bundleId: String, by actor: String, connection: PostgresConnection, logger: Logger) async throws -> Stop? {
        let current = try await active(connection: connection, logger: logger).first { $0.bundleId == bundleId }
        guard let current else { return nil }
        try await connection.query(
            "UPDATE reclaim.app_stops SET resumed_at = now(), resumed_by = \(actor) WHERE id = \(current.id) AND resumed_at IS NULL",
            logger: logger
        )
        return current
    }

    /// The stops in force.
    public static func active(connection: PostgresConnection, logger: Logger) async throws -> [Stop] {
        let rows = try await connection.query(
            """
            SELECT id, bundle_id, stopped_at, stopped_by, reason, cancel_sheet_answered_empty, refund_answers_expired
            FROM reclaim.app_stops WHERE resumed_at IS NULL ORDER BY bundle_id
            """,
            logger: logger
        )
        var stops: [Stop] = []
        for try await (id, bundleId, at, by, reason, sheet, refunds) in rows.decode((Int64, String, Date, String, String, Int32, Int32).self) {
            stops.append(
                Stop(
                    id: id,
                    bundleId: bundleId,
                    stoppedAt: at,
                    stoppedBy: by,
                    reason: reason,
                    cancelSheetAnsweredEmpty: Int(sheet),
                    refundAnswersExpired: Int(refunds)
                )
            )
        }
        return stops
    }

    /// Counts what a stop held: a cancel-sheet request answered `{}`, or a refund answer that expired while held.
    public enum Held: String, Sendable {
        case cancelSheet = "cancel_sheet_answered_empty"
        case refundExpired = "refund_answers_expired"
    }

    public static func note(_ held: Held, bundleId: String, connection: PostgresConnection, logger: Logger) async throws {
        switch held {
        case .cancelSheet:
            try await connection.query(
                "UPDATE reclaim.app_stops SET cancel_sheet_answered_empty = cancel_sheet_answered_empty + 1 WHERE bundle_id = \(bundleId) AND resumed_at IS NULL",
                logger: logger
            )
        case .refundExpired:
            // The stop that held it may have ended since: the newest of the app's stops.
            try await connection.query(
                """
                UPDATE reclaim.app_stops SET refund_answers_expired = refund_answers_expired + 1
                WHERE id = (SELECT max(id) FROM reclaim.app_stops WHERE bundle_id = \(bundleId))
                """,
                logger: logger
            )
        }
    }
}
