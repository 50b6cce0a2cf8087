import Foundation
import ReclaimDomain

/// The parsers of outside input, each as a function of raw bytes that must never trap, whatever the bytes; where a
/// parser promises more (a round trip, agreement with `JSONDecoder`), the target checks it and traps if it breaks,
/// so that libFuzzer reports it.
///
/// `reclaim-fuzz` runs them under libFuzzer (`scripts/fuzz`), and `FuzzSeedTests` replays the kept corpus and
/// every regression seed through the same functions in the test suite.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The `/console` session cookie (`ConsoleSession`), before and after its MAC check.
    case consoleCookie = "console-cookie"
    /// Durations as the config, the grant API and the command line write them (`DurationText`).
    case duration
    /// The app's `X-Reclaim-User-Token` (`UserTokenVerifier`).
    case userToken = "user-token"
    /// `POST /v1/grants`: the `Idempotency-Key` header (first line) and the JSON body (the rest).
    case grantRequest = "grant-request"
    /// The delivery API's query and path parameters and the offer event body (`OfferRequestInput`).
    case offerRequest = "offer-request"
    /// `{"signedPayload": "<JWS>"}` bodies of Apple's notifications, through the verifier's envelope checks.
    case notificationBody = "notification-body"
    /// The Retention Messaging realtime request body, through the verifier.
    case retentionBody = "retention-body"
    /// A compact JWS: segments, header (`alg`, `x5c`, `crit`) and chain checks.
    case jws
    /// Apple's payload JSON decoded by the hand-written tape decoder, which must agree with `JSONDecoder`.
    case payloadJSON = "payload-json"

    /// Runs the target on one input.
    public func run(_ bytes: [UInt8]) async {
        switch self {
        case .consoleCookie: Self.consoleCookie(bytes)
        case .duration: Self.duration(bytes)
        case .userToken: Self.userToken(bytes)
        case .grantRequest: Self.grantRequest(bytes)
        case .offerRequest: Self.offerRequest(bytes)
        case .notificationBody: await Self.notificationBody(bytes)
        case .retentionBody: await Self.retentionBody(bytes)
        case .jws: await Self.jws(bytes)
        case .payloadJSON: Self.payloadJSON(bytes)
        }
    }

    /// Runs the target on one input from a thread outside Swift's concurrency pool (libFuzzer's), waiting for
    /// the verifier's async work. Never call it from a task: it blocks its thread until the work is done.
    public func runBlocking(_ bytes: [UInt8]) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await run(bytes)
            done.signal()
        }
        done.wait()
    }

    // MARK: Targets

    static let secret = Array("reclaim-fuzz-secret".utf8)

    static func consoleCookie(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let claimed = ConsoleSession.claimed(Substring(text)) else { return }
        _ = ConsoleSession.isAuthentic(payload: claimed.payload, mac: claimed.mac, secret: secret)
        _ = claimed.session.expires
        _ = claimed.session.signedInAt
        // What this type writes for the claimed session must read back as the same session, and be authentic.
        let value = claimed.session.value(secret: secret)
        guard let again = ConsoleSession.claimed(Substring(value)), again.session == claimed.session,
            ConsoleSession.isAuthentic(payload: again.payload, mac: again.mac, secret: secret)
        else { fatalError("a console session does not round-trip: \(value)") }
    }

    static func duration(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let seconds = DurationText.seconds(text) else { return }
        precondition((0...DurationText.maximumSeconds).contains(seconds), "a duration out of bounds: \(seconds)")
        _ = Date(timeIntervalSince1970: 0).addingTimeInterval(TimeInterval(seconds))
        _ = CampaignEvaluatorFormat.duration(TimeInterval(seconds))
        _ = Duration.seconds(seconds)
    }

    static func userToken(_ bytes: [UInt8]) {
        let verifier = UserTokenVerifier(secret: Data(secret))
        let token = String(decoding: bytes, as: UTF8.self)
        let subject = UUID(uuidString: "6F1D2C3B-0000-4000-8000-000000000051")!
        _ = verifier.problem(with: token, appAccountToken: subject, now: Date(timeIntervalSince1970: 1_800_000_000))
    }

    static func grantRequest(_ bytes: [UInt8]) {
        let newline = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        _ = GrantRequest.isValidIdempotencyKey(String(decoding: bytes[..<newline], as: UTF8.self))
        let body = newline < bytes.endIndex ? Data(bytes[(newline + 1)...]) : Data()
        guard let request = try? GrantRequest(body: body) else { return }
        precondition((1...GrantRequest.maximumDeliverableFor).contains(request.deliverableFor))
        // The edge refuses a body holding U+0000 before it is decoded (StorableText): a body it lets through must
        // give no field that PostgreSQL cannot store.
        let fields =
            [request.bundleId, request.productId, request.offerIdentifier, request.reason, request.campaign]
            + [request.originalTransactionId, request.environment, request.messageIdentifier].compactMap { $0 }
        if StorableText.nulPath(inJSON: body) == nil {
            precondition(!fields.contains { $0.utf8.contains(0) }, "a NUL passed the edge: \(String(decoding: body, as: UTF8.self))")
        }
        // The fingerprint is of the normalized request: decoding the same body again gives the same one.
        precondition((try? GrantRequest(body: body))?.fingerprint == request.fingerprint && request.fingerprint.count == 32)
    }

    static func offerRequest(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let uuid = OfferRequestInput.uuid(text) { precondition(OfferRequestInput.uuid(uuid.uuidString) == uuid) }
        if let body = try? OfferRequestInput.event(body: Data(bytes)) {
            precondition(OfferRequestInput.events.contains(body.event))
            // Only purchase_failed carries an error, and one the column takes: no NUL, 1 to 256 characters.
            if let error = body.error {
                precondition(body.event == OfferRequestInput.failedEvent && !error.utf8.contains(0))
                precondition((1...OfferRequestInput.maxErrorCharacters).contains(error.unicodeScalars.count))
            }
        }
    }

    static func notificationBody(_ bytes: [UInt8]) async {
        guard let envelope = SignedPayloadBody.decode(bytes) else { return }
        _ = try? await verifier.verifyNotificationEnvelope(envelope.signedPayload)
    }

    static func retentionBody(_ bytes: [UInt8]) async {
        guard let envelope = SignedPayloadBody.decode(bytes) else { return }
        _ = try? await verifier.verifyRealtimeRequest(envelope.signedPayload)
    }

    static func jws(_ bytes: [UInt8]) async {
        _ = try? await verifier.verify(String(decoding: bytes, as: UTF8.self))
    }

    static func payloadJSON(_ bytes: [UInt8]) {
        let json = Data(bytes)
        agrees(NotificationPayload.self, json)
        agrees(TransactionInfo.self, json)
        agrees(RenewalInfo.self, json)
        agrees(RealtimeRequest.self, json)
        _ = AppleJWSVerifier.signedDate(in: json)
        // A payload holding U+0000 anywhere never decodes: nothing of it could be stored.
        if StorableText.nulPath(inJSON: json) != nil {
            precondition((try? PayloadDecoder.decode(TransactionInfo.self, from: json)) == nil, "a NUL decoded")
            precondition((try? PayloadDecoder.decode(NotificationPayload.self, from: json)) == nil, "a NUL decoded")
        }
    }

    // MARK: Helpers

    /// Whatever the tape decoder returns must be what `JSONDecoder` returns for the same bytes.
    static func agrees<T: Decodable & Equatable>(_ type: T.Type, _ json: Data) {
        guard let fast = PayloadDecoder.fastDecode(type, from: json) else { return }
        let reference = try? JSONDecoder().decode(type, from: json)
        precondition(reference == fast, "the tape decoder and JSONDecoder disagree on \(type): \(String(decoding: json, as: UTF8.self))")
    }

    /// Apple's root only: nothing a fuzzer makes verifies, but every check before the signature runs.
    static let verifier = AppleJWSVerifier(trust: RootTrust(everyApp: [AppleJWSVerifier.appleRootCAG3]))
}
