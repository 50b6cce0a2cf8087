import AsyncHTTPClient
import Logging
import NIOCore

/// One outbound target's HTTP client, and the address it connects to.
///
/// **Its own connection pool.** Every target has a client of its own, sized to `forwarding.concurrency`: a target
/// that hangs holds only its own connections, even when another target or webhook has the same host and port (with
/// one shared client, AsyncHTTPClient's pool of about eight connections per host made a hanging receiver stall
/// every other target on it).
///
/// **Connected to the address that was checked.** Unless `forwarding.allowPrivate` is on, the target's host is
/// resolved here, every answer is judged by ``AddressPolicy`` and the client is built with `dnsOverride` naming the
/// checked address, so the socket cannot reach another one: AsyncHTTPClient resolves again for each new connection
/// and has no hook to judge that answer, so a DNS answer that changed between the check and the connection (DNS
/// rebinding) would otherwise reach a private address. TLS still verifies the certificate for the host name (the
/// override keeps it as SNI). The name is resolved again once the answer is `recheckAfter` old, before the next
/// send; a new public answer builds a new client (the old one is shut down when its last send ends), a private
/// answer refuses the sends, no answer keeps the last checked address, and with none yet refuses the send (it is
/// retried with backoff like any failed send). One address of the answer is used: a receiver's other addresses
/// are tried only when the first one stops resolving.
actor TargetConnection {
    /// A send not made: the host does not resolve (yet), or resolves to an address ``AddressPolicy`` refuses.
    struct Refused: Error, CustomStringConvertible {
        let description: String
        /// The host resolved, to an address the policy refuses (not merely: not yet resolved).
        var isPrivateAnswer = false
    }

    typealias Resolver = @Sendable (String) async -> [AddressPolicy.Address]
    typealias Judge = @Sendable (AddressPolicy.Address) -> String?

    nonisolated let host: String
    private let allowPrivate: Bool
    private let configuration: HTTPClient.Configuration
    private let recheckAfter: Duration
    private let resolve: Resolver
    private let judge: Judge

    private struct Pinned {
        let client: HTTPClient
        /// nil when nothing is checked (`allowPrivate`): the client resolves by itself.
        let address: String?
        var checkedAt: ContinuousClock.Instant
    }
    private var current: Pinned?
    /// Sends in flight per client; a replaced client is shut down when its count reaches zero.
    private var inFlight: [ObjectIdentifier: Int] = [:]
    private var replaced: [ObjectIdentifier: HTTPClient] = [:]

    init(
        host: String,
        timeout: Duration,
        concurrency: Int,
        allowPrivate: Bool,
        recheckAfter: Duration = .seconds(30),
        resolve: @escaping Resolver = AddressPolicy.resolve,
        judge: @escaping Judge = AddressPolicy.refusal
    ) {
        self.host = host
        self.allowPrivate = allowPrivate
        self.recheckAfter = recheckAfter
        self.resolve = resolve
        self.judge = judge
        let seconds = max(1, timeout.components.seconds)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(min(10, seconds)), read: .seconds(seconds))
        )
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, concurrency))
        self.configuration = configuration
    }

    /// Runs `body` with the client of the checked address; throws ``Refused`` when there is none.
    nonisolated func withClient<T: Sendable>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        let client = try await acquire()
        do {
            let result = try await body(client)
            await release(client)
            return result
        } catch {
            await release(client)
            throw error
        }
    }

    /// Resolves and judges the host now: nil when it may be sent to, else why not (a start-up check).
    func check() async -> Refused? {
        do {
            _ = try await pinned()
            return nil
        } catch {
            return error
        }
    }

    /// Shuts down every client (the lane has ended: no send is in flight).
    func shutdown() async {
        var clients = Array(replaced.values)
        if let current { clients.append(current.client) }
        current = nil
        replaced = [:]
        for client in clients { try? await client.shutdown() }
    }

    private func acquire() async throws(Refused) -> HTTPClient {
        let client = try await pinned()
        inFlight[ObjectIdentifier(client), default: 0] += 1
        return client
    }

    private func release(_ client: HTTPClient) {
        let id = ObjectIdentifier(client)
        inFlight[id, default: 1] -= 1
        guard inFlight[id] == 0 else { return }
        inFlight[id] = nil
        if let old = replaced.removeValue(forKey: id) { Task { try? await old.shutdown() } }
    }

    private func pinned() async throws(Refused) -> HTTPClient {
        if let current, allowPrivate || ContinuousClock.now - current.checkedAt < recheckAfter { return current.client }
        if allowPrivate {
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            current = Pinned(client: client, address: nil, checkedAt: .now)
            return client
        }
        let answers = await resolve(host)
        // Another send may have resolved meanwhile (the actor is re-entered across the await): the later answer wins.
        for answer in answers {
            if let refusal = judge(answer) {
                retire()
                throw Refused(
                    description:
                        "\(host) resolves to \(AddressPolicy.text(answer)), \(refusal); set forwarding.allowPrivate: true to allow private addresses",
                    isPrivateAnswer: true
                )
            }
        }
        guard let first = answers.first else {
            if var current {
                // The resolver failed for now: keep the address checked last, and ask again after `recheckAfter`.
                current.checkedAt = .now
                self.current = current
                return current.client
            }
            throw Refused(description: "\(host) does not resolve")
        }
        let address = AddressPolicy.text(first)
        if var current, current.address == address {
            current.checkedAt = .now
            self.current = current
            return current.client
        }
        retire()
        var configuration = configuration
        configuration.dnsOverride = [Self.bare(host): address]
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        current = Pinned(client: client, address: address, checkedAt: .now)
        return client
    }

    /// The current client stops taking sends; it is shut down when its last one ends.
    private func retire() {
        guard let old = current?.client else { return }
        current = nil
        let id = ObjectIdentifier(old)
        if inFlight[id, default: 0] == 0 {
            Task { try? await old.shutdown() }
        } else {
            replaced[id] = old
        }
    }

    /// The host as AsyncHTTPClient keys `dnsOverride`: an IPv6 literal without its brackets.
    private static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
