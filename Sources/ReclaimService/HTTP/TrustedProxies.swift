import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who the client is behind a proxy. Behind one, every client has the proxy's address, so a per-address budget
/// (failed authentications) would be one budget for everybody: one key-guessing client would lock every app
/// out. `server.trustedProxies` names the proxies (CIDRs) whose `X-Forwarded-For` is believed; nobody else's is,
/// since any client can send the header.
///
/// The client is the right-most `X-Forwarded-For` address that is not itself a trusted proxy (each proxy appends
/// the address it received from); without trusted proxies, or from an untrusted peer, it is the peer.
struct TrustedProxies: Sendable {
    /// One address range: the address's bytes (4 for IPv4, 16 for IPv6) and the prefix length.
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        /// `10.0.0.0/8`, `fd00::/8`, or one address (`192.0.2.7`, a /32 or /128); nil for anything else.
        init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = TrustedProxies.bytes(of: String(parts[0])) else { return nil }
            let maximum = bytes.count * 8
            if parts.count == 2 {
                guard parts[1].count <= 3, let prefix = Int(parts[1]), (0...maximum).contains(prefix) else { return nil }
                self.prefix = prefix
            } else {
                self.prefix = maximum
            }
            self.bytes = bytes
        }

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for index in bytes.indices where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let ranges: [Range]

    /// The ranges of `texts`; those that are not an address or a CIDR are left out (the config's validation
    /// refuses them first, with ``problems(_:)``).
    init(_ texts: [String]) {
        ranges = texts.compactMap(Range.init)
    }

    /// Each text that is not an IP address or a CIDR, with its position.
    static func problems(_ texts: [String]) -> [String] {
        texts.enumerated().compactMap { index, text in
            Range(text) == nil ? "server.trustedProxies[\(index)]: \(text) is not an IP address or CIDR (e.g. 10.0.0.0/8, fd00::/8)" : nil
        }
    }

    func isTrusted(_ address: [UInt8]) -> Bool { ranges.contains { $0.contains(address) } }

    /// Who the client of a request is, as far as its proxies can be believed.
    enum Client: Equatable {
        /// The client's address as text, for per-client budgets.
        case address(String)
        /// A trusted proxy sent an `X-Forwarded-For` longer than ``maxForwardedForBytes``: refused with 431.
        case forwardedForTooLong
        /// A trusted proxy sent an `X-Forwarded-For` with a hop that is not an address: refused with 400.
        case forwardedForUnreadable(String)
    }

    /// Room for about a hundred hops; a longer header from a trusted proxy is refused, not believed in part.
    static let maxForwardedForBytes = 4096

    /// The client behind `peer`. A header from a trusted proxy that is too long or does not parse is refused rather
    /// than charged to the proxy: charging it would let 30 such requests spend the proxy's own budget of failed
    /// authentications, which is every client's behind it.
    func client(peer: SocketAddress?, forwardedFor: String?) -> Client {
        let peerText = peer?.ipAddress ?? "unknown"
        guard !ranges.isEmpty, let peerBytes = Self.bytes(of: peerText), isTrusted(peerBytes), let forwardedFor, !forwardedFor.isEmpty
        else { return .address(peerText) }
        guard forwardedFor.utf8.count <= Self.maxForwardedForBytes else { return .forwardedForTooLong }
        for hop in forwardedFor.split(separator: ",").reversed() {
            let text = hop.trimmingCharacters(in: .whitespaces)
            guard let bytes = Self.bytes(of: text) else { return .forwardedForUnreadable(text) }
            if !isTrusted(bytes) { return .address(text) }
        }
        return .address(peerText)
    }

    /// An address's bytes: 4 for IPv4 (an IPv4-mapped IPv6 address included), 16 for IPv6; nil for other text.
    static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45, let address = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12..<16]) }
            return bytes
        default:
            return nil
        }
    }
}
