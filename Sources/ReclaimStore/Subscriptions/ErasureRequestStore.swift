import Foundation
import Logging
import PostgresNIO

/// `reclaim.erasure_requests`: erasures asked over HTTP, by key and Idempotency-Key, holding no identifier.
public enum ErasureRequestStore {
    /// The answer a request under this key got before, and whether it was the same request.
    public static func earlier(
        apiKeyId: UUID,
        idempotencyKey: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> (
        hmac: [UInt8], answer: String
    )? {
        let rows = try await connection.query(
            "SELECT request_hmac, answer::text FROM reclaim.erasure_requests WHERE api_key_id = \(apiKeyId) AND idempotency_key = \(idempotencyKey)",
            logger: logger
        )
        for try await (hmac, answer) in rows.decode((ByteBuffer, String).self) { return (Array(buffer: hmac), answer) }
        return nil
    }

    public static func insert(
        apiKeyId: UUID,
        idempotencyKey: String,
        hmac: [UInt8],
        answer: String,
        connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO reclaim.erasure_requests (api_key_id, idempotency_key, request_hmac, answer)
            VALUES (\(apiKeyId), \(idempotencyKey), \(ByteBuffer(bytes: hmac)), \(answer)::jsonb)
            """,
            logger: logger
        )
    }
}
