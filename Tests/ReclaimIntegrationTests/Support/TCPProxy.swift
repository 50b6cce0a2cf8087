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
    private struct Link {
        var client: Int32
        var server: Int32
        var cut: Bool
    }
    private let links = Mutex<[Int: Link]>([:])
    private let nextId = Atomic(0)
    private let closed = Atomic(false)

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
        links.withLock { links in
            for id in links.keys { links[id]?.cut = true }
            return links.count
        }
    }

    /// Connections the proxy holds open (cut or not).
    var openConnections: Int { links.withLock { $0.count } }

    /// Stops accepting and closes every socket.
    func stop() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let all = links.withLock { links in
            defer { links.removeAll() }
            return Array(links.values)
        }
        for link in all {
            shutdown(link.client, Int32(SHUT_RDWR))
            shutdown(link.server, Int32(SHUT_RDWR))
        }
    }

    deinit { stop() }

    private func acceptLoop() {
        while !closed.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            let id = nextId.add(1, ordering: .relaxed).newValue
            links.withLock { $0[id] = Link(client: client, server: server, cut: false) }
            Thread { [self] in pump(id, from: client, to: server) }.start()
            Thread { [self] in pump(id, from: server, to: client) }.start()
        }
    }

    /// Copies one direction until either side closes; a cut link reads and drops. A link that was cut is
    /// never closed by the proxy while the test runs: the peer that is still there must find out by itself.
    private func pump(_ id: Int, from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(source, &buffer, buffer.count, 0)
            let isCut = links.withLock { $0[id]?.cut ?? false }
            if count <= 0 {
                if isCut { return }  // leave the other socket open: it stays silent, not closed
                finish(id)
                return
            }
            if isCut { continue }
            if delay > .zero {
                let (seconds, attoseconds) = delay.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
            var offset = 0
            while offset < count {
                let sent = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 {
                    finish(id)
                    return
                }
                offset += sent
            }
        }
    }

    private func finish(_ id: Int) {
        guard let link = links.withLock({ $0.removeValue(forKey: id) }) else { return }
        shutdown(link.client, Int32(SHUT_RDWR))
        shutdown(link.server, Int32(SHUT_RDWR))
        close(link.client)
        close(link.server)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
