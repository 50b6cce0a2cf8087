import Foundation
import HTTPTypes
import PostgresNIO
import ReclaimStore
import ReclaimTestSupport
import Testing

/// What the cancel-sheet tests read of `reclaim.cancel_sheet_decisions`, and the rules every record keeps whatever the
/// machine's speed (issue 81). A realtime answer that misses its budget leaves as `{}` by design: a test must not take
/// that `{}` for the campaign's decision, nor read the record before the product has settled it.
///
/// The product guarantees, per `requestIdentifier`:
/// - at most one record;
/// - an answer that is not `{}` is recorded as `answered`, with that answer;
/// - an answer `{}` is recorded as anything but a shown `answered` (held out, held back, a shadow's, `too_late`) or not
///   at all (the budget passed before the record);
/// - the `too_late` mark of a decision that committed after its `{}` left lands shortly after (``TooLateMarks``): a
///   test waits for it, bounded, rather than read the record at once.
enum CancelSheetRecords {
    struct Recorded: Equatable, CustomStringConvertible {
        let outcome: String
        let shadow: Bool
        let answer: String
        let messageIdentifier: String?
        let repeatOf: UUID?

        /// A decision the subscriber was shown: what its answer must carry.
        var shown: Bool { outcome == "answered" && !shadow && answer != "nothing" }
        var description: String { "\(outcome)\(shadow ? " (shadow)" : "") \(answer) \(messageIdentifier ?? "-")" }
    }

    /// The `answer` column a response's key is recorded as.
    static let column = ["message": "message", "alternateProduct": "alternate_product", "promotionalOffer": "promotional_offer"]

    /// Every record of each request identifier.
    static func records(_ client: Database, of requests: some Collection<String>) async throws -> [String: [Recorded]] {
        guard !requests.isEmpty else { return [:] }
        let rows = try await client.query(
            """
            SELECT request_identifier, outcome, shadow, answer, message_identifier, repeat_of
            FROM reclaim.cancel_sheet_decisions WHERE request_identifier = ANY(\(Array(requests)))
            """,
            logger: TestPostgres.logger
        )
        var found: [String: [Recorded]] = [:]
        for try await (request, outcome, shadow, answer, message, repeatOf) in rows.decode((String, String, Bool, String, String?, UUID?).self) {
            found[request, default: []].append(
                Recorded(outcome: outcome, shadow: shadow, answer: answer, messageIdentifier: message, repeatOf: repeatOf)
            )
        }
        return found
    }

    /// The records of `answers` (request identifier: every body answered for it) once settled: no `{}` whose record
    /// still says it was shown, which is a `too_late` mark not yet landed (waited for, up to 30 s, then reported).
    static func settled(_ client: Database, answers: [String: [String]]) async throws -> [String: [Recorded]] {
        var found: [String: [Recorded]] = [:]
        do {
            try await eventually("every {} answer's too_late mark landed", timeout: .seconds(30), every: .milliseconds(50)) {
                found = try await records(client, of: answers.keys)
                return answers.allSatisfy { request, bodies in
                    bodies.allSatisfy { $0 != "{}" } || !(found[request] ?? []).contains(where: \.shown)
                }
            }
        } catch is DeadlineExceeded {
            // Reported below, request by request.
        }
        return found
    }

    /// Checks the guarantees above for every request of `answers`; returns the records read.
    @discardableResult
    static func expectTrue(
        _ client: Database,
        answers: [String: [String]],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: [Recorded]] {
        let found = try await settled(client, answers: answers)
        for (request, bodies) in answers {
            let recorded = found[request] ?? []
            #expect(recorded.count <= 1, "request \(request): \(recorded.count) records \(recorded)", sourceLocation: sourceLocation)
            for body in bodies {
                let answer = try CancelSheetTests.json(body)
                if let (key, value) = answer.first {
                    let message = (value as? [String: Any])?["messageIdentifier"] as? String
                    #expect(
                        recorded.count == 1 && recorded[0].shown && recorded[0].answer == column[key] && recorded[0].messageIdentifier == message,
                        "request \(request) was answered \(body) but recorded \(recorded)",
                        sourceLocation: sourceLocation
                    )
                } else {
                    let shown = recorded.contains { $0.shown }
                    #expect(
                        !shown,
                        "request \(request) was answered {} but recorded \(recorded)",
                        sourceLocation: sourceLocation
                    )
                }
            }
        }
        return found
    }

    /// Whether the budget cut a request answered `{}`: its record, settled, is `too_late` or absent. Only for
    /// requests a cancel-sheet campaign decides (the fallback path records nothing).
    static func cut(_ client: Database, request: String, answered body: String) async throws -> Bool {
        guard body == "{}" else { return false }
        let recorded = try await settled(client, answers: [request: [body]])[request] ?? []
        return recorded.isEmpty || recorded.allSatisfy { $0.outcome == "too_late" }
    }

    /// Posts a request for the same subscriber until an answer is not cut by the budget (at most `attempts`): the
    /// product's decision, as a subscriber on a quick enough machine would have had it. A cut request's decision was
    /// never shown, so the next one decides anew (a `too_late` first decision is not repeated).
    static func decided(
        _ client: Database,
        attempts: Int = 5,
        post: (String) async throws -> (HTTPResponse.Status, String),
        request: (_ requestIdentifier: String) throws -> String
    ) async throws -> (requestIdentifier: String, body: String) {
        var last = ("", "{}")
        for attempt in 1...attempts {
            let requestIdentifier = UUID().uuidString.lowercased()
            let (status, body) = try await post(try request(requestIdentifier))
            #expect(status == .ok)
            last = (requestIdentifier, body)
            guard try await cut(client, request: requestIdentifier, answered: body) else { return last }
            print("cancel sheet: request \(requestIdentifier) answered {} for lack of time (attempt \(attempt) of \(attempts)); asked again")
        }
        return last
    }
}
