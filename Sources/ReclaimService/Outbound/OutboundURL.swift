import Foundation

/// Checks and shows outbound target URLs.
enum OutboundURL {
    /// Loopback, private (RFC 1918, RFC 6598 shared), link-local, unique-local and unspecified ranges: where a
    /// target must not be unless `forwarding.allowPrivate` is on.
    static let privateRanges = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
        "::/128", "::1/128", "fc00::/7", "fe80::/10",
    ].compactMap(TrustedProxies.Range.init)

    /// What is wrong with `text` as a target URL, or nil. Host names are judged as written (not resolved):
    /// `localhost` and `*.localhost` count as private.
    static func problem(_ text: String, allowPrivate: Bool) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme)
        else { return "\(text) is not an http(s) URL" }
        guard let host = components.host, !host.isEmpty else { return "\(text) names no host" }
        if components.user != nil || components.password != nil { return "give credentials as a header, not in the URL" }
        if text.contains(" ") { return "a URL holds no spaces" }
        guard !allowPrivate else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let lower = bare.lowercased()
        if lower == "localhost" || lower.hasSuffix(".localhost") {
            return "\(host) is this machine; set forwarding.allowPrivate: true to allow private addresses"
        }
        if let bytes = TrustedProxies.bytes(of: bare), privateRanges.contains(where: { $0.contains(bytes) }) {
            return "\(host) is a private address; set forwarding.allowPrivate: true to allow private addresses"
        }
        return nil
    }

    /// The URL as logs, metrics and the console show it: scheme, host, port and path. A query string or user
    /// info may hold a token, so they are left out.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return "(not a URL)" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "(not a URL)"
    }

    /// A target id (`kind bundle url`) with its URL redacted.
    static func redactedTargetId(_ id: String) -> String {
        let parts = id.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count == 3 else { return id }
        return "\(parts[0]) \(parts[1]) \(redacted(parts[2]))"
    }
}
