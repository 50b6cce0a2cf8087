import Foundation
import PostgresNIO
import ReclaimDomain
import ReclaimStore
import ReclaimTestSupport
import Testing

/// Webhook events are named in three places by choice (docs/decisions/0004-webhook-events-in-triggers.md): the
/// Swift list the config subscribes to (``WebhookEvent``), the triggers that queue them (schema.sql), and openapi.yaml
/// (held to the Swift list by OpenAPITests). These tests hold the triggers to the Swift list, and the channels they
/// NOTIFY to the ones Swift listens on, reading the functions PostgreSQL actually installed.
@Suite("Webhook events: the triggers send exactly the Swift list, on the channels Swift listens to", .poolWatchdog)
struct WebhookEventDefinitionTests {
    /// The bodies of the reclaim schema's functions, as installed by schema.sql.
    static func functionBodies(_ client: Database) async throws -> String {
        let rows = try await client.query(
            "SELECT string_agg(prosrc, E'\\n') FROM pg_proc WHERE pronamespace = 'reclaim'::regnamespace",
            logger: TestPostgres.logger
        )
        for try await text in rows.decode(String.self) { return text }
        return ""
    }

    /// Every quoted literal of the form 'a.b' (event names), or passed to pg_notify (channels).
    static func literals(_ pattern: String, in text: String) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern)
        return Set(
            regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
                Range(match.range(at: 1), in: text).map { String(text[$0]) }
            }
        )
    }

    @Test("the event types the triggers can queue are WebhookEvent's cases, no more and no fewer")
    func triggersSendTheSwiftList() async throws {
        try await withTestDatabase { client, _ in
            let bodies = try await Self.functionBodies(client)
            // Named outright ('grant.created'), or 'offer.' || NEW.state for every state an offer can move to but 'ready'
            // (the trigger's WHEN excludes it; the insert is offer.issued).
            var sent = try Self.literals(#"'([a-z]+\.[a-z]+)'"#, in: bodies)
            #expect(bodies.contains("'offer.' || NEW.state"), "the offer trigger no longer derives its type from the state: update this test")
            let rows = try await client.query(
                """
                SELECT pg_get_constraintdef(oid) FROM pg_constraint
                WHERE conrelid = 'reclaim.offers'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'
                """,
                logger: TestPostgres.logger
            )
            var states: Set<String> = []
            for try await definition in rows.decode(String.self) { states.formUnion(try Self.literals(#"'([a-z_]+)'::text"#, in: definition)) }
            #expect(states.contains("ready") && states.count > 1, "\(states)")
            sent.formUnion(states.subtracting(["ready"]).map { "offer.\($0)" })
            #expect(sent == Set(WebhookEvent.allCases.map(\.rawValue)))
        }
    }

    @Test("every channel the triggers NOTIFY is one Reclaim listens on")
    func triggerChannelsAreSwiftChannels() async throws {
        try await withTestDatabase { client, _ in
            let channels = try Self.literals(#"pg_notify\('([a-z_]+)'"#, in: try await Self.functionBodies(client))
            #expect(channels == [OutboundStore.channel, OfferStore.liveOffersChannel])
        }
    }
}
