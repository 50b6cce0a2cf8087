import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests' socket tools share their process with SwiftNIO's sockets: a descriptor closed while it may still be
/// used, or closed twice, is soon a NIO socket's number, and the stale user then reads NIO's bytes, writes into its
/// stream or closes it. (CI once crashed on NIO's `assert(readResult == .some)`: epoll said readable, and the read
/// found nothing.)
@Suite("Test socket tools close each descriptor once, when nothing can use it any more")
struct SocketToolTests {
    @Test("a side that goes while the other direction holds bytes in its delay: the numbers freed meanwhile are not written or read by the proxy")
    func closedWhileDelaying() async throws {
        let upstream = try LoopbackListener()
        // Long enough that a test pool starved for a while still sees the bytes held before the client goes.
        let proxy = try TCPProxy(upstreamPort: upstream.port, delay: .seconds(2))
        defer { proxy.stop() }

        let client = try RawSocket(port: proxy.port)
        let server = try await RawSocket.onThread { try upstream.acceptOne() }
        defer { close(server) }
        // The proxy reads these and holds them for its delay; meanwhile the client goes.
        #expect(send(server, "late", 4, Int32(MSG_NOSIGNAL)) == 4)
        try await eventually("the proxy holds the bytes", timeout: .seconds(10)) { proxy.holding == 1 }
        client.reset()
        let ended = try await RawSocket.onThread {
            var byte: UInt8 = 0
            return recv(server, &byte, 1, 0)
        }
        #expect(ended <= 0, "the proxy ends the upstream side when the client goes")

        // Numbers freed now go to the next sockets opened: these stand for NIO's.
        let pairs = (0..<4).map { _ in SocketPair() }
        defer { for pair in pairs { pair.close() } }
        for pair in pairs { pair.write("mine") }
        // The held bytes' thread wakes (it wrote into, or read from, what it held before) and both threads return.
        try await eventually("the proxy's threads for the connection returned", timeout: .seconds(10)) {
            proxy.holding == 0 && proxy.openConnections == 0
        }
        for pair in pairs {
            #expect(pair.available() == ("", "mine"), "a socket opened after the proxy's went got only its own bytes")
        }
    }

    @Test("a RawSocket that cannot connect closes its socket once: another thread's descriptors stay open")
    func failedConnectClosesOnce() async throws {
        let nothing = try LoopbackListener()
        let refusing = nothing.port
        nothing.close()  // connecting to this port is now refused at once
        let stop = StopFlag()
        let strays = try await withThrowingTaskGroup(of: Int.self) { group in
            // Opens, uses and closes socket pairs as fast as it can: a second close of a number it just got breaks its use.
            group.addTask {
                try await RawSocket.onThread {
                    var broken = 0
                    while !stop.isSet {
                        let pair = SocketPair()
                        pair.write("x")
                        if pair.available() != ("", "x") { broken += 1 }
                        pair.close()
                    }
                    return broken
                }
            }
            try await RawSocket.onThread {
                for _ in 0..<3_000 { _ = try? RawSocket(port: refusing, timeout: 1) }
            }
            stop.set()
            return try await group.reduce(0, +)
        }
        #expect(strays == 0, "another thread's socket was closed under it")
    }
}

private final class StopFlag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// A blocking listener on 127.0.0.1 (a free port), standing for PostgreSQL.
private final class LoopbackListener: Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound, listen(fd, 4) == 0 else {
            Glibc.close(fd)
            throw DeadlineExceeded(description: "cannot listen: errno \(errno)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one connection, giving it 5 s receive timeouts.
    func acceptOne() throws -> Int32 {
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { throw DeadlineExceeded(description: "accept failed: errno \(errno)") }
        var time = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        return connection
    }

    func close() { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(fd) }
}

/// Two connected Unix sockets: what is written into one is read from the other.
private struct SocketPair {
    let ends: (Int32, Int32)

    init() {
        var fds: [Int32] = [-1, -1]
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        ends = (fds[0], fds[1])
    }

    func write(_ text: String) {
        _ = text.withCString { send(ends.0, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// What each end holds now, without waiting.
    func available() -> (String, String) {
        (Self.available(ends.0), Self.available(ends.1))
    }

    private static func available(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
    }

    func close() {
        Glibc.close(ends.0)
        Glibc.close(ends.1)
    }
}
