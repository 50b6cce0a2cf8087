import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a forwarding target or webhook may not connect unless `forwarding.allowPrivate` is on, judged on the
/// binary addresses the socket will use, never on the text of the URL: `127.1`, `2130706433`, `0x7f000001`, `0`,
/// `[::ffff:7f00:1]` and a name that resolves to this machine are all 127.0.0.1 or 0.0.0.0 to the socket.
///
/// Numeric hosts are read by `getaddrinfo` with `AI_NUMERICHOST`: the platform's own parser, so every spelling
/// it accepts (inet_aton's decimal, octal, hexadecimal and one- to four-part forms; inet_pton's IPv6) is covered
/// because it is the same code. Names are resolved with `getaddrinfo` and every answer is checked.
enum AddressPolicy {
    /// An address as bytes: 4 for IPv4, 16 for IPv6.
    typealias Address = [UInt8]

    /// Why `address` is not for outbound sends, or nil when it is public. IPv6 forms that carry an IPv4 address
    /// (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged
    /// by that IPv4 address: a NAT64 gateway or 6to4 relay delivers them there. DNS64 networks answer every
    /// public name with `64:ff9b::` addresses, so that prefix is not refused whole.
    static func refusal(_ address: Address) -> String? {
        if address.count == 4 { return refusal(v4: address) }
        guard address.count == 16 else { return "not an IP address" }
        let prefix96 = Array(address[0..<12])
        if prefix96 == Array(repeating: 0, count: 10) + [0xFF, 0xFF] { return refusal(v4: Array(address[12...])) }  // ::ffff:a.b.c.d
        if prefix96.allSatisfy({ $0 == 0 }) {
            if address[12...].allSatisfy({ $0 == 0 }) { return "an unspecified address" }  // ::
            if address[12..<15].allSatisfy({ $0 == 0 }) && address[15] == 1 { return "this machine (loopback)" }  // ::1
            return refusal(v4: Array(address[12...]))  // ::a.b.c.d, IPv4-compatible (deprecated)
        }
        if prefix96 == [0x00, 0x64, 0xFF, 0x9B] + Array(repeating: 0, count: 8) { return refusal(v4: Array(address[12...])) }  // NAT64
        if address[0] == 0x00 && address[1] == 0x64 && address[2] == 0xFF && address[3] == 0x9B && address[4] == 0x00 && address[5] == 0x01 {
            return "a local-use NAT64 address (64:ff9b:1::/48)"
        }
        if address[0] == 0x20 && address[1] == 0x02 { return refusal(v4: Array(address[2..<6])) }  // 6to4
        if address[0] == 0x20 && address[1] == 0x01 && address[2] == 0 && address[3] == 0 { return "a Teredo address (2001::/32)" }
        if address[0] & 0xFE == 0xFC { return "a unique-local address (fc00::/7)" }
        if address[0] == 0xFE && address[1] & 0xC0 == 0x80 { return "a link-local address (fe80::/10)" }
        if address[0] == 0xFE && address[1] & 0xC0 == 0xC0 { return "a site-local address (fec0::/10)" }
        if address[0] == 0xFF { return "a multicast address" }
        return nil
    }

    private static func refusal(v4 a: Address) -> String? {
        switch (a[0], a[1]) {
        case (0, _): return "an unspecified address (0.0.0.0/8)"
        case (127, _): return "this machine (loopback)"
        case (10, _), (172, 16...31), (192, 168): return "a private address"
        case (100, 64...127): return "a shared address (100.64.0.0/10)"
        case (169, 254): return "a link-local address (169.254.0.0/16, where cloud metadata services answer)"
        case (192, 0) where a[2] == 0: return "an IETF protocol address (192.0.0.0/24)"
        case (198, 18...19): return "a benchmarking address (198.18.0.0/15)"
        case (224...239, _): return "a multicast address"
        case (240...255, _): return "a reserved or broadcast address"
        default: return nil
        }
    }

    /// The address a numeric host stands for, in any spelling the platform's resolver accepts; nil for a name.
    /// Brackets around an IPv6 literal are removed first.
    static func numeric(_ host: String) -> Address? {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard !bare.isEmpty, bare.utf8.count <= 64, !bare.utf8.contains(0) else { return nil }
        return lookUp(bare, flags: AI_NUMERICHOST).first
    }

    /// `localhost` and `*.localhost` (RFC 6761: always this machine, whatever DNS says).
    static func isLocalhostName(_ host: String) -> Bool {
        let lower = host.lowercased().trimmingSuffix(".")
        return lower == "localhost" || lower.hasSuffix(".localhost")
    }

    /// Every address `host` resolves to (numeric hosts included), in the resolver's order; empty when it does not
    /// resolve. Runs `getaddrinfo`, which blocks, on NIO's thread pool.
    static func resolve(_ host: String) async -> [Address] {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard !bare.isEmpty, !bare.utf8.contains(0) else { return [] }
        return (try? await NIOThreadPool.singleton.runIfActive { lookUp(bare, flags: 0) }) ?? []
    }

    /// The text form of an address (`127.0.0.1`, `2001:db8::1`), as a connection target.
    static func text(_ address: Address) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = address.count == 4 ? AF_INET : AF_INET6
        let ok = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        return ok ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    private static func lookUp(_ host: String, flags: Int32) -> [Address] {
        var hints = addrinfo()
        hints.ai_flags = flags
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [Address] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            if let socketAddress = info.pointee.ai_addr {
                switch Int32(info.pointee.ai_family) {
                case AF_INET:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    addresses.append(bytes)
                case AF_INET6:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    addresses.append(bytes)
                default: break
                }
            }
            next = info.pointee.ai_next
        }
        var seen = Set<Address>()
        return addresses.filter { seen.insert($0).inserted }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
