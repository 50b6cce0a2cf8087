import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches the subscriber's offers from Reclaim at app launch and reports what the app did with them.
///
/// - Timeouts suit app launch (a few seconds, `timeout`): an offer that comes late is worth less than a launch
///   that waits.
/// - Retries: a 5xx, a timeout or a network failure is retried with backoff (`maxAttempts` in all); 4xx is not.
/// - User tokens: when the app requires them, `userToken` is asked for one before the first call that needs it
///   and again, once per request, when the server refuses the one it gave (401): tokens expire.
/// - Events: each (offer, event) is sent until the server acknowledged it once, never again.
///
/// The integration guide is docs/ios.md in the Reclaim repository.
public final class ReclaimClient: Sendable {
    /// Gives the current user's token, made by the app's own backend with the app's `userTokenSecretFile` (an
    /// HMAC-SHA256 of the user's appAccountToken and an expiry: docs/backend-integration.md; Reclaim has no command
    /// that makes one, since the secret stays with the backend): called when the client has none yet and after the
    /// server refused the last one.
    public typealias UserTokenProvider = @Sendable () async throws -> String

    public let baseURL: URL
    let appKey: String
    let userToken: UserTokenProvider?
    let timeout: TimeInterval
    let maxAttempts: Int
    let session: URLSession
    /// The clock that ages offers' signatures (``PendingOffer/signatureIsStale(at:)``); a test's own.
    let now: @Sendable () -> Date
    /// The (offer, event) pairs the server acknowledged.
    private let sent = StringSet()
    private let tokens = CachedToken()
    let eventQueue = EventQueue()
    /// The nonces of offers already given to a purchase: Apple takes each for one buy request only.
    let spentNonces = StringSet()

    /// - Parameters:
    ///   - appKey: the app key from `reclaim apps create-key`.
    ///   - userToken: when the app requires user tokens, how to get one for the signed-in user (see
    ///     ``UserTokenProvider``); `nil` when it does not.
    public convenience init(
        baseURL: URL,
        appKey: String,
        userToken: UserTokenProvider? = nil,
        timeout: TimeInterval = 4,
        maxAttempts: Int = 3,
        session: URLSession = .shared
    ) {
        self.init(baseURL: baseURL, appKey: appKey, userToken: userToken, timeout: timeout, maxAttempts: maxAttempts, session: session) {
            Date()
        }
    }

    /// With the clock `now` (tests: an app left running for hours).
    package init(
        baseURL: URL,
        appKey: String,
        userToken: UserTokenProvider? = nil,
        timeout: TimeInterval = 4,
        maxAttempts: Int = 3,
        session: URLSession = .shared,
        now: @escaping @Sendable () -> Date
    ) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.userToken = userToken
        self.timeout = timeout
        self.maxAttempts = max(1, maxAttempts)
        self.session = session
        self.now = now
    }

    private struct OffersAnswer: Decodable {
        let offers: [PendingOffer]
    }

    /// The offers waiting for this subscriber (empty when none). `appAccountToken` is the UUID the app sets on
    /// its purchases; it is sent lowercase, as the signatures carry it.
    public func pendingOffers(appAccountToken: UUID) async throws -> [PendingOffer] {
        var components = URLComponents(url: baseURL.appendingPathComponent("v1/offers"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "appAccountToken", value: appAccountToken.uuidString.lowercased())]
        guard let url = components?.url else { throw ReclaimClientError.invalidResponse("cannot build the URL from \(baseURL)") }
        let data = try await sendWithUserToken(URLRequest(url: url))
        return try offers(from: data, lookup: .appAccountToken(appAccountToken))
    }

    /// The offers waiting for the subscriber whose transaction this is (empty when none), for subscribers without
    /// an appAccountToken. `signedTransaction` is StoreKit 2's `jwsRepresentation` of a transaction of the
    /// subscription (on Apple platforms ``pendingOffers(for:appAccountToken:)`` finds them by subscription group):
    /// Reclaim checks Apple's signature and answers for that subscription only.
    public func pendingOffers(signedTransaction: String) async throws -> [PendingOffer] {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/offers/lookup"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["signedTransaction": signedTransaction])
        let data = try await send(request)
        return try offers(from: data, lookup: .signedTransaction(signedTransaction))
    }

    /// The offers waiting for this subscriber, by every lookup that applies, so that the app need not choose:
    ///
    /// 1. With `appAccountToken` (the UUID the app sets on its signed-in user's purchases): `GET /v1/offers`. Offers
    ///    found are the answer.
    /// 2. Without one, or when it finds none: each of `signedTransactions()` (StoreKit 2 `jwsRepresentation`s of the
    ///    subscriber's transactions; on Apple platforms ``pendingOffers(for:appAccountToken:)`` passes the latest of
    ///    each subscription in the product's group) through `POST /v1/offers/lookup`. A signed-in user whose purchase
    ///    predates the token is found here; `signedTransactions` is not called when step 1 found offers.
    ///
    /// Empty when no lookup finds an offer. A lookup that fails does not stop the next; the first error is thrown
    /// only when one failed and none found an offer. Cancelled (an app's deadline around the lookup), it throws
    /// `CancellationError` at once instead of going on to the next lookup.
    public func pendingOffers(
        appAccountToken: UUID?,
        signedTransactions: () async throws -> [String]
    ) async throws -> [PendingOffer] {
        var firstError: (any Error)?
        if let appAccountToken {
            do {
                let offers = try await pendingOffers(appAccountToken: appAccountToken)
                if !offers.isEmpty { return offers }
            } catch {
                firstError = error
            }
        }
        try Task.checkCancellation()
        var found: [PendingOffer] = []
        do {
            var asked = Set<String>()
            for transaction in try await signedTransactions() where asked.insert(transaction).inserted {
                try Task.checkCancellation()
                do {
                    for offer in try await pendingOffers(signedTransaction: transaction) where !found.contains(where: { $0.id == offer.id }) {
                        found.append(offer)
                    }
                } catch {
                    firstError = firstError ?? error
                }
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            firstError = firstError ?? error
        }
        if found.isEmpty, let firstError { throw firstError }
        return found
    }

    private struct ElementsAnswer: Decodable {
        let offers: [PendingOffersAndCodes.Element]
    }

    /// The offers and the offer codes waiting for this subscriber (ReclaimClient 3.0): `GET /v1/offers` with
    /// `include=offerCodes`, which 2.0 never sends (a server before 3.0 ignores it and answers offers only).
    public func pendingOffersAndCodes(appAccountToken: UUID) async throws -> PendingOffersAndCodes {
        var components = URLComponents(url: baseURL.appendingPathComponent("v1/offers"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "appAccountToken", value: appAccountToken.uuidString.lowercased()),
            URLQueryItem(name: "include", value: "offerCodes"),
        ]
        guard let url = components?.url else { throw ReclaimClientError.invalidResponse("cannot build the URL from \(baseURL)") }
        let data = try await sendWithUserToken(URLRequest(url: url))
        return try offersAndCodes(from: data, lookup: .appAccountToken(appAccountToken))
    }

    /// As ``pendingOffersAndCodes(appAccountToken:)``, for a subscription proven by a transaction Apple signed
    /// (``pendingOffers(signedTransaction:)``).
    public func pendingOffersAndCodes(signedTransaction: String) async throws -> PendingOffersAndCodes {
        var components = URLComponents(url: baseURL.appendingPathComponent("v1/offers/lookup"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "include", value: "offerCodes")]
        guard let url = components?.url else { throw ReclaimClientError.invalidResponse("cannot build the URL from \(baseURL)") }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["signedTransaction": signedTransaction])
        let data = try await send(request)
        return try offersAndCodes(from: data, lookup: .signedTransaction(signedTransaction))
    }

    private func offersAndCodes(from data: Data, lookup: PendingOffer.Lookup) throws -> PendingOffersAndCodes {
        do {
            let elements = try JSONDecoder().decode(ElementsAnswer.self, from: data).offers
            return PendingOffersAndCodes(
                offers: elements.compactMap(\.offer).map { offer in
                    var offer = offer
                    offer.lookup = lookup
                    return offer
                },
                codes: elements.compactMap(\.code)
            )
        } catch {
            throw ReclaimClientError.invalidResponse("the offers do not decode: \(error)")
        }
    }

    /// `offer` as Reclaim delivers it now, with fresh signatures, fetched again the way it was fetched (the token, or
    /// the signed transaction); nil when Reclaim no longer delivers it (expired, redeemed, withdrawn). An offer the
    /// client did not fetch itself comes back unchanged.
    public func refreshed(_ offer: PendingOffer) async throws -> PendingOffer? {
        let offers: [PendingOffer]
        switch offer.lookup {
        case .appAccountToken(let token): offers = try await pendingOffers(appAccountToken: token)
        case .signedTransaction(let transaction): offers = try await pendingOffers(signedTransaction: transaction)
        case nil: return offer
        }
        return offers.first { $0.id == offer.id }
    }

    private func offers(from data: Data, lookup: PendingOffer.Lookup) throws -> [PendingOffer] {
        do {
            return try JSONDecoder().decode(OffersAnswer.self, from: data).offers.map { offer in
                var offer = offer
                offer.lookup = lookup
                return offer
            }
        } catch {
            throw ReclaimClientError.invalidResponse("the offers do not decode: \(error)")
        }
    }

    static let invalidUserToken = "urn:reclaim:problem:invalid-user-token"

    /// Sends with the user token, when the app requires one; after a 401 asks the provider for a new token and
    /// sends once more (a token refused twice in a row is the caller's to see).
    func sendWithUserToken(_ original: URLRequest) async throws -> Data {
        guard let userToken else { return try await send(original) }
        var request = original
        let token: String
        if let cached = tokens.value {
            token = cached
        } else {
            token = try await userToken()
            tokens.value = token
        }
        request.setValue(token, forHTTPHeaderField: "X-Reclaim-User-Token")
        do {
            return try await send(request)
        } catch ReclaimClientError.unauthorized(let type, _) where type == Self.invalidUserToken {
            let fresh = try await userToken()
            tokens.value = fresh
            request.setValue(fresh, forHTTPHeaderField: "X-Reclaim-User-Token")
            do {
                return try await send(request)
            } catch ReclaimClientError.unauthorized(let type, let detail) where type == Self.invalidUserToken {
                tokens.value = nil  // refused too: the next request asks the provider afresh
                throw ReclaimClientError.unauthorized(type: type, detail: detail)
            }
        }
    }

    /// Reports `event` for `offer`, once: later calls for the same pair return at once. With ``OfferEvent/purchaseFailed``,
    /// `error` is what StoreKit threw; the server gets its description (``describe(_:)``). Other events send none.
    public func record(_ event: OfferEvent, for offer: PendingOffer, error: (any Error)? = nil) async throws {
        try await record(event, for: offer, errorText: event == .purchaseFailed ? error.flatMap(Self.describe) : nil)
    }

    /// Reports `event` for an offer code, once, as for an offer: ``OfferEvent/shown`` when the app shows it,
    /// ``OfferEvent/purchaseStarted`` when it opens Apple's redemption sheet or the redemption URL (``redeem(_:in:)``
    /// does), ``OfferEvent/purchaseFailed`` with the sheet's error, ``OfferEvent/dismissed`` when the subscriber turns
    /// it down. Apple reports the redemption itself to Reclaim.
    public func record(_ event: OfferEvent, for code: PendingOfferCode, error: (any Error)? = nil) async throws {
        try await record(event, id: code.id, errorText: event == .purchaseFailed ? error.flatMap(Self.describe) : nil)
    }

    func record(_ event: OfferEvent, for offer: PendingOffer, errorText: String?) async throws {
        try await record(event, id: offer.id, errorText: errorText)
    }

    private func record(_ event: OfferEvent, id: String, errorText: String?) async throws {
        struct Body: Encodable {
            let event: String
            let error: String?
        }
        let key = "\(id)/\(event.rawValue)"
        guard !sent.contains(key) else { return }
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/offers/\(id)/events"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(Body(event: event.rawValue, error: errorText))
        _ = try await send(request)
        sent.insert(key)
    }

    /// The most characters of an error the server takes (`POST /v1/offers/{id}/events`).
    static let maxErrorCharacters = 256

    /// An error as the server stores it: its full name (`StoreKit.Product.PurchaseError.invalidOfferIdentifier`, or
    /// an `NSError`'s domain and code), without NUL, at most 256 characters; nil when nothing is left.
    public static func describe(_ error: any Error) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in String(reflecting: error).unicodeScalars.prefix(maxErrorCharacters) where scalar != "\u{0}" {
            scalars.append(scalar)
        }
        let text = String(scalars).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Sends with the app key, retrying 5xx, timeouts and network failures with backoff (0.2 s, 0.4 s, …).
    func send(_ original: URLRequest) async throws -> Data {
        var request = original
        request.timeoutInterval = timeout
        request.setValue("Bearer \(appKey)", forHTTPHeaderField: "Authorization")
        var lastError = ReclaimClientError.network("not sent")
        for attempt in 1...maxAttempts {
            if attempt > 1 { try await Task.sleep(nanoseconds: UInt64(0.2 * Double(1 << (attempt - 2)) * 1e9)) }
            try Task.checkCancellation()  // cancelled (a deadline around the call): no further attempt
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: request)
            } catch let error as URLError where error.code == .timedOut {
                lastError = .timedOut
                continue
            } catch let error as URLError where error.code == .cancelled {
                throw CancellationError()
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                lastError = .network("\(error)")
                continue
            }
            guard let http = response as? HTTPURLResponse else { throw ReclaimClientError.invalidResponse("not an HTTP response") }
            switch http.statusCode {
            case 200..<300: return data
            case 401:
                let problem = Self.problem(data)
                throw ReclaimClientError.unauthorized(type: problem.type, detail: problem.detail)
            case 429: throw ReclaimClientError.rateLimited(retryAfter: http.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init))
            case 500...:
                let problem = Self.problem(data)
                lastError = .server(status: http.statusCode, type: problem.type, detail: problem.detail)
            default:
                let problem = Self.problem(data)
                throw ReclaimClientError.server(status: http.statusCode, type: problem.type, detail: problem.detail)
            }
        }
        throw lastError
    }

    private struct Problem: Decodable {
        let type: String
        let detail: String
    }

    static func problem(_ data: Data) -> (type: String, detail: String) {
        guard let problem = try? JSONDecoder().decode(Problem.self, from: data) else {
            return ("", String(decoding: data.prefix(200), as: UTF8.self))
        }
        return (problem.type, problem.detail)
    }
}

/// The last user token the provider gave.
final class CachedToken: @unchecked Sendable {
    private let lock = NSLock()
    private var token: String?

    var value: String? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return token
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            token = newValue
        }
    }
}

/// Strings shared by the client's tasks (the events sent, the nonces spent; a few per session: never pruned).
final class StringSet: @unchecked Sendable {
    private let lock = NSLock()
    private var keys = Set<String>()

    func contains(_ key: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return keys.contains(key)
    }

    func insert(_ key: String) {
        lock.lock()
        defer { lock.unlock() }
        keys.insert(key)
    }
}
