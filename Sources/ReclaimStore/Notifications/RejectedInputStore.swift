import Crypto
import Foundation
import Logging
import PostgresNIO

/// Forensic records of refused inputs: reason and a SHA-256 of the body, never the body itself.
public struct RejectedInputStore: Sendable {
    public let postgres: PostgresClient
    /// Rows kept; older ones are deleted as new ones arrive.
    public let keep: Int

    public init(postgres: PostgresClient, keep: Int) {
        self.postgres = postgres
        self.keep = keep
    }

    public func record(endpoint: String, problem: String, reason: String, body: ByteBuffer, logger: Logger) async throws {
        let digest = ByteBuffer(bytes: SHA256.hash(data: Data(body.readableBytesView)))
        let rows = try await postgres.query(
            """
            INSERT INTO reclaim.rejected_inputs (endpoint, problem, reason, body_sha256, body_size)
            VALUES (\(endpoint), \(problem), \(String(reason.prefix(1000))), \(digest), \(Int32(clamping: body.readableBytes)))
            RETURNING id
            """,
            logger: logger
        )
        var id: Int64 = 0
        for try await value in rows.decode(Int64.self) { id = value }
        // Trim now and then rather than on every insert: the table stays within `keep` plus 100 rows.
        if id % 100 == 0 {
            try await postgres.query("DELETE FROM reclaim.rejected_inputs WHERE id <= \(id - Int64(keep))", logger: logger)
        }
    }
}
