import Foundation
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

@testable import ReclaimService

@Suite("GET /v1/offers answers most launches from the in-memory index of who has a live offer", .poolWatchdog)
struct LiveOfferIndexTests {
    let logger = TestPostgres.logger

    @Test("an index not loaded or not confirmed within its staleness bound sends every launch to the database")
    func staleness() {
        let index = LiveOfferIndex()
        let token = UUID()
        let now = ContinuousClock.now
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: token, now: now) == nil, "not loaded")
        index.load([LiveOfferIndex.key(bundleId: "b", appAccountToken: token)])
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: token, now: now) == nil, "loaded, sync not confirmed")
        index.synced(upTo: now)
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: token, now: now) == true)
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: UUID(), now: now) == false)
        #expect(index.mayHaveOffer(bundleId: "other", appAccountToken: token, now: now) == false, "another app's user")
        let late = now + LiveOfferIndex.staleness
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: UUID(), now: late) == nil, "past the bound: ask the database")
        index.forget()
        #expect(index.mayHaveOffer(bundleId: "b", appAccountToken: token, now: now) == nil, "a lost session forgets")
    }

    /// An offer (of a grant, for the foreign keys) for `token`, of a subscription of its own, committed now.
    func insertOffer(_ client: Database, token: UUID) async throws {
        try await client.query(
            """
            WITH g AS (
                INSERT INTO reclaim.grants (id, bundle_id, idempotency_key, app_account_token, product_id, offer_identifier, reason, campaign)
                VALUES (gen_random_uuid(), 'com.example.app', gen_random_uuid()::text, \(token), 'p', 'o', 'r', 'c') RETURNING id)
            INSERT INTO reclaim.offers (id, grant_id, bundle_id, environment, original_transaction_id, app_account_token, campaign_id,
                                        triggered_at, priority, product_id, offer_identifier, key_id, nonce, signed_at,
                                        application_username, storekit1_signature, storekit2_jws, deliverable_until)
            SELECT gen_random_uuid(), id, 'com.example.app', 'Sandbox', \(token.uuidString), \(token), 'c', now(), 0, 'p', 'o', 'k',
                   gen_random_uuid(), now(), '', 's', 'j', now() + interval '7 days'
            FROM g
            """,
            logger: logger
        )
    }

    @Test("the listener loads live offers, learns a new one within the bound, forgets when its session dies and comes back")
    func listener() async throws {
        try await withTestDatabase { client, _ in
            let before = UUID()
            try await insertOffer(client, token: before)
            let index = LiveOfferIndex()
            let listener = LiveOfferListener(index: index, postgres: client, logger: logger)
            try await withServices([listener]) {
                try await eventually("the index is in sync", timeout: .seconds(30), every: .milliseconds(20)) {
                    index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: UUID()) == false
                }
                #expect(index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: before) == true, "loaded")

                // A new offer: the index learns it, and never answers "none" once the bound has passed since its
                // commit (it may answer "unknown", which asks the database). The time is read before each answer,
                // so a test process starved by a busy machine can only make the check lenient, never fail it.
                let token = UUID()
                try await insertOffer(client, token: token)
                let committed = ContinuousClock.now
                var staleAnswers: [Duration] = []
                try await eventually("the new offer is in the index", timeout: .seconds(30), every: .milliseconds(5)) {
                    let asked = ContinuousClock.now
                    let answer = index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: token)
                    if answer == false && asked - committed > LiveOfferIndex.staleness { staleAnswers.append(asked - committed) }
                    return answer == true
                }
                #expect(staleAnswers.isEmpty, "answered \"no offer\" \(staleAnswers) after the commit; the bound is \(LiveOfferIndex.staleness)")

                // The LISTEN session ends: the index forgets, every launch asks the database, then it is back.
                try await client.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()
                    """,
                    logger: logger
                )
                try await eventually("the index forgets", timeout: .seconds(30), every: .milliseconds(5)) {
                    index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: UUID()) == nil
                }
                let whileAway = UUID()
                try await insertOffer(client, token: whileAway)
                try await eventually("the index is back in sync", timeout: .seconds(30), every: .milliseconds(20)) {
                    index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: UUID()) == false
                }
                #expect(index.mayHaveOffer(bundleId: "com.example.app", appAccountToken: whileAway) == true, "reloaded")
            }
        }
    }
}
