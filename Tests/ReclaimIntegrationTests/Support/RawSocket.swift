import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client on a thread of its own, for edge cases an HTTP client library hides: bodies written
/// before the answer is read, endless chunked bodies, dropped connections.
final class RawSocket: @unchecked Sendable {
    private var fd: Int32

    /// Connects to 127.0.0.1:`port`; sends and receives give up after `timeout` seconds.
    init(port: Int, timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            // The deinit runs when an init of a class throws after every property is set: it must not close this
            // number again, by then perhaps another socket's (one of SwiftNIO's).
            close(fd)
            fd = -1
            throw DeadlineExceeded(description: "cannot connect to port \(port): errno \(errno)")
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Drops the connection with a reset (SO_LINGER 0) instead of a FIN, as a client killed mid-request does.
    func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(fd)
        fd = -1
    }

    /// Sends all of `data`; false when the peer closed or reset the connection (or the send timed out).
    @discardableResult
    func send(_ data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let sent = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    /// Reads what is there (up to 64 KiB); empty when the peer closed, nil on a reset or timeout.
    func receive() -> Data? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 { return nil }
        return Data(buffer.prefix(count))
    }

    /// Runs blocking socket work on a thread of its own, so the cooperative pool stays free for the server.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }
}
