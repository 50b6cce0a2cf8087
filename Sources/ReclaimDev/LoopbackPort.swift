import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 for a server of our own (the embedded PostgreSQL, a test's `reclaim serve`).
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// A port nothing listens on now, outside the kernel's range of ephemeral ports where there is room below it.
    ///
    /// Why outside: these servers keep their port across restarts (the embedded cluster writes it down; a restarted
    /// `reclaim serve` is asked for the same one). A port from the ephemeral range (what binding port 0 gives) may be
    /// taken in between as the local end of any outgoing connection, and the restart then fails with "Address
    /// already in use": it did in CI's PostgreSQL-restart test. The kernel never hands out a port outside that range
    /// by itself. On systems without `/proc/sys/net/ipv4/ip_local_port_range`, or where nothing fits, the kernel's
    /// choice.
    public static func free() throws -> Int {
        if let ephemeral = ephemeralRange(), ephemeral.lowerBound > lowest + 1 {
            for _ in 0..<100 {
                let candidate = Int.random(in: lowest..<ephemeral.lowerBound)
                if let port = tryBind(candidate) { return port }
            }
        }
        guard let port = tryBind(0) else { throw Unavailable(description: "no free TCP port on 127.0.0.1") }
        return port
    }

    /// Below this lie the registered ports of well-known services.
    static let lowest = 10_000

    /// Linux's ephemeral port range, e.g. 32768...60999.
    public static func ephemeralRange() -> ClosedRange<Int>? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        let bounds = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return nil }
        return bounds[0]...bounds[1]
    }

    /// Binds `port` (0: the kernel's choice) on 127.0.0.1 and releases it; the port bound, or nil when it is taken.
    private static func tryBind(_ port: Int) -> Int? {
        guard let port = UInt16(exactly: port) else { return nil }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }
}
