import Foundation
import ReclaimDomain

/// Checks and shows outbound target URLs.
enum OutboundURL {
    /// What is wrong with `text` as a target URL, or nil. A numeric host is judged as the socket reads it, in any
    /// spelling (``AddressPolicy/numeric(_:)``); `localhost` and `*.localhost` count as this machine. Other names
    /// are resolved and judged by their answers when the sender starts and again before sends
    /// (``TargetConnection``): what a name resolves to is not known here.
    static func problem(_ text: String, allowPrivate: Bool) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme)
        else { return "\(text) is not an http(s) URL" }
        guard let host = components.host, !host.isEmpty else { return "\(text) names no host" }
        if components.user != nil || components.password != nil { return "give credentials as a header, not in the URL" }
        if text.contains(" ") { return "a URL holds no spaces" }
        if let problem = portProblem(text) { return problem }
        // The sender pins the connection by the host as written (dnsOverride is keyed by it): a percent-encoded host
        // could be decoded differently there and escape the pin, so none is taken.
        if components.percentEncodedHost?.contains("%") == true { return "a host is written without percent-encoding" }
        guard !allowPrivate else { return nil }
        if AddressPolicy.isLocalhostName(host) {
            return "\(host) is this machine; set forwarding.allowPrivate: true to allow private addresses"
        }
        if let address = AddressPolicy.numeric(host), let refusal = AddressPolicy.refusal(address) {
            let canonical = AddressPolicy.text(address)
            let alias = host == canonical || host == "[\(canonical)]" ? "" : " (\(canonical))"
            return "\(host)\(alias) is \(refusal); set forwarding.allowPrivate: true to allow private addresses"
        }
        return nil
    }

    /// A port that is not 1…65535: URLComponents reads 99999999999999999999 as no port (the request went to port 80)
    /// and 65536 as a number that trapped in the socket layer (the process crashed at the first send, and again
    /// after every restart, since the job stayed queued).
    static func portProblem(_ text: String) -> String? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { !"/?#".contains($0) }
        let afterHost = authority.lastIndex(of: "]").map { authority[authority.index(after: $0)...] } ?? authority
        guard let colon = afterHost.lastIndex(of: ":") else { return nil }
        let port = afterHost[afterHost.index(after: colon)...]
        guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number)
        else {
            return "the port \(LogText.bounded(String(port), limit: 24)) is not 1 to 65535"
        }
        return nil
    }

    /// The URL as the duplicate check compares it: scheme and host in lower case, no default port, an empty path
    /// as `/` (`HTTPS://Example.com:443` and `https://example.com/` are the same receiver).
    static func normalized(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return text }
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.host = components.host?.lowercased()
        if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80) { components.port = nil }
        if components.path.isEmpty { components.path = "/" }
        return components.string ?? text
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
