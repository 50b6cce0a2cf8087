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
public final class ReclaimClient: Sendable {
    /// Gives the current user's token, made by the app's backend (`reclaim apps user-token`, or the backend's own
    /// HMAC): called when the client has none yet and after the server refused the last one.
    public typealias UserTokenProvider = @Sendable () async throws -> String

    public let baseURL: URL
    let appKey: String
    let userToken: UserTokenProvider?
    let timeout: TimeInterval
    let maxAttempts: Int
    let session: URLSession
    private let sent = SentEvents()
    private let tokens = CachedToken()

    /// - Parameters:
    ///   - appKey: the app key from `reclaim apps create-key`.
    ///   - userToken: when the app requires user tokens, how to get one for the signed-in user (see
    ///     ``UserTokenProvider``); `nil` when it does not.
    public init(
        baseURL: URL,
        appKey: String,
        userToken: UserTokenProvider? = nil,
        timeout: TimeInterval = 4,
        maxAttempts: Int = 3,
        session: URLSession = .shared
    ) {
        self.baseURL = baseURL
        self.appKey = appKey
        self.userToken = userToken
        self.timeout = timeout
        self.maxAttempts = max(1, maxAttempts)
        self.session = session
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
        return try offers(from: data)
    }

    /// The offers waiting for the subscriber whose transaction this is (empty when none), for subscribers without
    /// an appAccountToken. `signedTransaction` is StoreKit 2's `jwsRepresentation` of a transaction of the
    /// subscription (e.g. from `Transaction.latest(for:)`; ``pendingOffers(forProduct:)`` does that on Apple
    /// platforms): Reclaim checks Apple's signature and answers for that subscription only.
    public func pendingOffers(signedTransaction: String) async throws -> [PendingOffer] {
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/offers/lookup"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["signedTransaction": signedTransaction])
        let data = try await send(request)
        return try offers(from: data)
    }

    private func offers(from data: Data) throws -> [PendingOffer] {
        do {
            return try JSONDecoder().decode(OffersAnswer.self, from: data).offers
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

    /// Reports `event` for `offer`, once: later calls for the same pair return at once.
    public func record(_ event: OfferEvent, for offer: PendingOffer) async throws {
        let key = "\(offer.id)/\(event.rawValue)"
        guard !sent.contains(key) else { return }
        var request = URLRequest(url: baseURL.appendingPathComponent("v1/offers/\(offer.id)/events"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("{\"event\":\"\(event.rawValue)\"}".utf8)
        _ = try await send(request)
        sent.insert(key)
    }

    /// Sends with the app key, retrying 5xx, timeouts and network failures with backoff (0.2 s, 0.4 s, …).
    func send(_ original: URLRequest) async throws -> Data {
        var request = original
        request.timeoutInterval = timeout
        request.setValue("Bearer \(appKey)", forHTTPHeaderField: "Authorization")
        var lastError = ReclaimClientError.network("not sent")
        for attempt in 1...maxAttempts {
            if attempt > 1 { try await Task.sleep(nanoseconds: UInt64(0.2 * Double(1 << (attempt - 2)) * 1e9)) }
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: request)
            } catch let error as URLError where error.code == .timedOut {
                lastError = .timedOut
                continue
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

/// The (offer, event) pairs the server acknowledged.
final class SentEvents: @unchecked Sendable {
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
