import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches the subscriber's offers from Reclaim at app launch and reports what the app did with them.
///
/// - Timeouts suit app launch (a few seconds, `timeout`): an offer that comes late is worth less than a launch
///   that waits.
/// - Retries: a 5xx, a timeout or a network failure is retried with backoff (`maxAttempts` in all); 4xx is not.
/// - Events: each (offer, event) is sent until the server acknowledged it once, never again.
public final class ReclaimClient: Sendable {
    public let baseURL: URL
    let appKey: String
    let userToken: String?
    let timeout: TimeInterval
    let maxAttempts: Int
    let session: URLSession
    private let sent = SentEvents()

    /// - Parameters:
    ///   - appKey: the app key from `reclaim apps create-key`.
    ///   - userToken: when the app requires user tokens, the token its backend made for the signed-in user.
    public init(
        baseURL: URL,
        appKey: String,
        userToken: String? = nil,
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
        var request = URLRequest(url: url)
        if let userToken { request.setValue(userToken, forHTTPHeaderField: "X-Reclaim-User-Token") }
        let data = try await send(request)
        do {
            return try JSONDecoder().decode(OffersAnswer.self, from: data).offers
        } catch {
            throw ReclaimClientError.invalidResponse("the offers do not decode: \(error)")
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
            case 401: throw ReclaimClientError.unauthorized(detail: Self.problem(data).detail)
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
