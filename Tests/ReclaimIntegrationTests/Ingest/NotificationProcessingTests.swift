import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("Workers process ingested notifications into subscription state", .poolWatchdog)
struct NotificationProcessingTests {
    let logger = TestPostgres.logger

    @Test("the real corpus, ingested in reverse order, leaves the subscriber in the state of its latest notification")
    func realCorpusState() async throws {
        let notifications = try AppleSandboxFixtures.all().reversed()
        try await withTestDatabase { client, _ in
            let dependencies = try Dependencies.test(postgres: client, config: NotificationIngestTests.sandboxConfig)
            let app = Application(router: buildRouter(dependencies))
            try await app.test(.router) { http in
                for notification in notifications {
                    try await http.execute(
                        uri: "/v1/apple/notifications",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(bytes: notification.body)
                    ) { #expect($0.status == .ok) }
                }
            }
            let pool = WorkerPool(
                queue: JobQueue(postgres: client),
                handlers: jobHandlers(dependencies),
                options: .init(concurrency: 2, batchSize: 8, pollInterval: .milliseconds(100)),
                logger: logger
            )
            try await withServices([pool]) {
                try await eventually("all notifications processed") { try await jobCount(client, state: .completed) == 116 }
            }
            let rows = try await client.query(
                """
                SELECT status, auto_renew, product_id, last_notification_type, last_subtype, app_account_token::text,
                       (extract(epoch FROM expires_at) * 1000)::bigint
                FROM reclaim.subscriptions WHERE original_transaction_id = '2000000970472825'
                """,
                logger: logger
            )
            var found = false
            for try await (status, autoRenew, product, type, subtype, token, expires) in rows.decode(
                (String, Bool?, String?, String?, String?, String?, Int64?).self
            ) {
                found = true
                #expect(status == "expired")
                #expect(autoRenew == false)
                #expect(product == "ca.geniusparentingai.basic.yearlyplan")
                #expect(type == "EXPIRED")
                #expect(subtype == "VOLUNTARY")
                #expect(token == "00000000-0000-0000-0000-000000000051")
                #expect(expires == 1_753_863_508_000)
            }
            #expect(found)
        }
    }
}
