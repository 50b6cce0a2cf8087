import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of PostgreSQL that can cut its open connections the way a network partition or a dead
/// load balancer does: ``cut()`` makes every connection open at that moment swallow what either side sends, and
/// keeps both sockets open, so neither Reclaim nor PostgreSQL learns that anything happened. Connections made
/// afterwards pass traffic again.
///
/// With a `delay`, each direction holds what it reads that long before passing it on: a database far away (a round
/// trip of twice the delay for a statement and its answer).
///
/// Blocking sockets, two threads per connection: a test tool, not a server.
final class TCPProxy: @unchecked Sendable {
    let port: Int
    private let upstreamPort: Int
    private let delay: Duration
    private let listener: Int32
    /// One proxied connection. Its two sockets are closed only when both of its pumps have returned: a number
    /// closed while the other pump may still `recv` or `send` on it can be handed to a socket opened elsewhere in
    /// this process (one of SwiftNIO's), and the pump would then steal that socket's bytes (NIO asserts when epoll
    /// says readable and its read finds nothing) or write into it.
    private struct Link {
        var client: Int32
        var server: Int32
        var cut: Bool
        var pumping: Int
    }
    private struct State {
        var links: [Int: Link] = [:]
        var nextId = 0
        var closed = false
        var listening = true
    }
    private let state = Mutex(State())
    private let delaying = Atomic(0)

    /// Listens on 127.0.0.1 (a free port) and forwards to 127.0.0.1:`upstreamPort`.
    init(upstreamPort: Int, delay: Duration = .zero) throws {
        self.upstreamPort = upstreamPort
        self.delay = delay
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound, listen(fd, 128) == 0 else {
            close(fd)
            throw DeadlineExceeded(description: "the proxy cannot listen: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Cuts every connection open now: from here on each swallows what either side sends, and stays open.
    /// Returns how many were cut.
    @discardableResult
    func cut() -> Int {
        state.withLock { state in
            for id in state.links.keys { state.links[id]?.cut = true }
            return state.links.count
        }
    }

    /// Connections the proxy holds open (cut or not): a connection counts until both of its pumps have returned.
    var openConnections: Int { state.withLock { $0.links.count } }

    /// Pumps holding bytes they read for `delay` before passing them on.
    var holding: Int { delaying.load(ordering: .relaxed) }

    /// Stops accepting and ends every connection. Only shuts sockets down: each is closed by the thread that
    /// still uses it (the accept loop closes the listener, a connection's last pump its sockets).
    func stop() {
        // Under the lock: a socket found there is not closed yet (closing happens after its removal).
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            if state.listening { shutdown(listener, Int32(SHUT_RDWR)) }
            for link in state.links.values {
                shutdown(link.client, Int32(SHUT_RDWR))
                shutdown(link.server, Int32(SHUT_RDWR))
            }
        }
    }

    deinit { stop() }

    private func acceptLoop() {
        defer {
            state.withLock { state in
                state.listening = false
                close(listener)
            }
        }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            let id = state.withLock { state -> Int? in
                guard connected == 0, !state.closed else { return nil }
                state.nextId += 1
                state.links[state.nextId] = Link(client: client, server: server, cut: false, pumping: 2)
                return state.nextId
            }
            guard let id else {
                close(client)
                close(server)
                if connected == 0 { return }  // stopped
                continue
            }
            Thread { [self] in pump(id, from: client, to: server) }.start()
            Thread { [self] in pump(id, from: server, to: client) }.start()
        }
    }

    /// Copies one direction until either side closes; a cut link reads and drops. A link that was cut is
    /// never shut down by the proxy while the test runs: the peer that is still there must find out by itself.
    private func pump(_ id: Int, from source: Int32, to destination: Int32) {
        defer { release(id) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(source, &buffer, buffer.count, 0)
            let isCut = state.withLock { $0.links[id]?.cut ?? false }
            if count <= 0 {
                if !isCut { end(id) }  // a cut link leaves the other socket open: it stays silent, not closed
                return
            }
            if isCut { continue }
            if delay > .zero {
                let (seconds, attoseconds) = delay.components
                delaying.add(1, ordering: .relaxed)
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                delaying.subtract(1, ordering: .relaxed)
            }
            var offset = 0
            while offset < count {
                let sent = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 {
                    end(id)
                    return
                }
                offset += sent
            }
        }
    }

    /// Ends both directions: the other pump's `recv` or `send` returns, and it releases its share.
    private func end(_ id: Int) {
        guard let link = state.withLock({ $0.links[id] }) else { return }
        shutdown(link.client, Int32(SHUT_RDWR))
        shutdown(link.server, Int32(SHUT_RDWR))
    }

    /// A pump has returned; the second to return closes the link's sockets, which no thread uses any more.
    private func release(_ id: Int) {
        let done = state.withLock { state -> Link? in
            state.links[id]?.pumping -= 1
            guard let link = state.links[id], link.pumping == 0 else { return nil }
            state.links[id] = nil
            return link
        }
        if let done {
            close(done.client)
            close(done.server)
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
