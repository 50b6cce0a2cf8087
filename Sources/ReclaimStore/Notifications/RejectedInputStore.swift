import Crypto
import Foundation
import Logging
import PostgresNIO

/// Forensic records of refused inputs: reason and a SHA-256 of the body, never the body itself.
public enum RejectedInputStore {
    /// One refusal, ready to store.
    public struct Rejection: Sendable {
        public var receivedAt: Date
        public var endpoint: String
        public var problem: String
        public var reason: String
        public var bodySHA256: [UInt8]
        public var bodySize: Int
        /// The configured app the refused notification names, unverified (its `notification.refused` webhook).
        public var claimedBundleId: String?

        public init(endpoint: String, problem: String, reason: String, body: ByteBuffer, claimedBundleId: String? = nil, receivedAt: Date = Date()) {
            self.receivedAt = receivedAt
            self.endpoint = endpoint
            self.problem = problem
            self.reason = String(reason.prefix(1000))
            self.bodySHA256 = Array(SHA256.hash(data: Data(body.readableBytesView)))
            self.bodySize = body.readableBytes
            self.claimedBundleId = claimedBundleId
        }
    }

    /// Stores a batch in one statement and trims the table to the newest `keep` rows (plus one batch): older
    /// ones are deleted as new ones arrive.
    public static func record(_ batch: [Rejection], keep: Int, connection: PostgresConnection, logger: Logger) async throws {
        guard !batch.isEmpty else { return }
        let rows = try await connection.query(
            """
            INSERT INTO reclaim.rejected_inputs (received_at, endpoint, problem, reason, body_sha256, body_size, claimed_bundle_id)
            SELECT r, e, p, re, b, s, NULLIF(c, '') FROM unnest(\(batch.map(\.receivedAt))::timestamptz[], \(batch.map(\.endpoint))::text[],
                                 \(batch.map(\.problem))::text[], \(batch.map(\.reason))::text[],
                                 \(batch.map { "\\x" + $0.bodySHA256.map { String(format: "%02x", $0) }.joined() })::bytea[],
                                 \(batch.map { Int32(clamping: $0.bodySize) })::int[], \(batch.map { $0.claimedBundleId ?? "" })::text[])
                AS t(r, e, p, re, b, s, c)
            RETURNING id
            """,
            logger: logger
        )
        var last: Int64 = 0
        for try await id in rows.decode(Int64.self) { last = max(last, id) }
        // `keep` is validated (0…10,000,000) and `last` is a positive identity: no overflow either way.
        let (bound, overflow) = last.subtractingReportingOverflow(Int64(clamping: max(keep, 0)))
        guard !overflow else { return }
        try await connection.query("DELETE FROM reclaim.rejected_inputs WHERE id <= \(bound)", logger: logger)
    }
}
