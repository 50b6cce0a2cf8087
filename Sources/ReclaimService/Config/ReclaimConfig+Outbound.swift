import Foundation
import ReclaimDomain
import ReclaimStore

extension ReclaimConfig {
    /// Headers a target's config may not set: Reclaim writes them (the body's own, the signature's), or HTTP does.
    static let reservedOutboundHeaders: Set<String> = [
        "content-type", "content-length", "host", "transfer-encoding", "connection", "x-reclaim-notification-uuid", "webhook-id",
        "webhook-timestamp", "webhook-signature",
    ]

    /// The checks of `apps[].forwarding`, `apps[].webhooks` and `forwarding`, each problem with its config path.
    func outboundProblems() -> [String] {
        var problems: [String] = []
        if !(1...64).contains(forwarding.concurrency) { problems.append("forwarding.concurrency must be from 1 to 64") }
        for (index, app) in apps.enumerated() {
            var urls = Set<String>()
            func check(_ path: String, kind: String, url: String, environments: [String]?, timeout: ConfigDuration) {
                if let problem = OutboundURL.problem(url, allowPrivate: forwarding.allowPrivate) { problems.append("\(path).url: \(problem)") }
                if !urls.insert("\(kind) \(OutboundURL.normalized(url))").inserted {
                    problems.append("\(path).url: \(OutboundURL.redacted(url)) is listed twice")
                }
                if environments?.isEmpty == true { problems.append("\(path).environments: list at least one, or leave it out for the app's") }
                for environment in environments ?? [] where !app.environments.contains(environment) {
                    problems.append(
                        "\(path).environments: \(environment) is not one of the app's environments (\(app.environments.joined(separator: ", ")))"
                    )
                }
                if !(1...300).contains(timeout.seconds) { problems.append("\(path).timeout must be from 1s to 5m") }
            }
            for (position, target) in app.forwarding.enumerated() {
                let path = "apps[\(index)].forwarding[\(position)]"
                check(path, kind: "forward", url: target.url, environments: target.environments, timeout: target.timeout)
                let named = target.headers.map { ($0.key, "headers", Optional($0.value)) } + target.headerFiles.map { ($0.key, "headerFiles", nil) }
                for (name, key, value) in named.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) {
                    if Self.reservedOutboundHeaders.contains(name.lowercased()) {
                        problems.append("\(path).\(key).\(name): Reclaim sets this header itself")
                    } else if name.isEmpty || !name.utf8.allSatisfy({ Self.isTokenByte($0) }) {
                        problems.append("\(path).\(key): \(LogText.bounded(name, limit: 60)) is not a header name")
                    } else if let value, !Self.isFieldValue(value) {
                        problems.append("\(path).\(key).\(name): a header value holds only visible characters, spaces and tabs")
                    }
                }
                for name in target.headerFiles.keys.sorted() where target.headers.keys.contains(where: { $0.lowercased() == name.lowercased() }) {
                    problems.append("\(path).headerFiles.\(name): also in headers; give it once")
                }
            }
            for (position, webhook) in app.webhooks.enumerated() {
                let path = "apps[\(index)].webhooks[\(position)]"
                check(path, kind: "webhook", url: webhook.url, environments: webhook.environments, timeout: webhook.timeout)
                let known = WebhookEvent.allCases.map(\.rawValue)
                for event in webhook.events ?? [] where !known.contains(event) {
                    problems.append("\(path).events: unknown event \(event) (known: \(known.joined(separator: ", ")))")
                }
                if webhook.events?.isEmpty == true { problems.append("\(path).events: list at least one event, or leave it out for all") }
            }
        }
        return problems
    }

    /// RFC 9110 field-value: visible characters, spaces and tabs. The HTTP client refuses others at every send,
    /// quoting the value (a token) in its error.
    static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F })
    }

    /// RFC 9110 `token` characters, what a header name is made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Every forwarding target and webhook, with the webhooks' secrets and the forwarding header files read and
    /// checked: what `reclaim serve` mirrors and sends to. Fails at start-up, naming each key's path, when a secret
    /// file is missing or wrong.
    public func outboundTargets() throws -> [OutboundTarget] {
        var targets: [OutboundTarget] = []
        var problems: [String] = []
        func secret(_ file: String, path: String) -> WebhookSecret? {
            guard let contents = FileManager.default.contents(atPath: file) else {
                problems.append("\(path): cannot read \(file)")
                return nil
            }
            do {
                return try WebhookSecret(text: String(decoding: contents, as: UTF8.self))
            } catch {
                problems.append("\(path): \(file): \(error)")
                return nil
            }
        }
        /// A header value read from a file, its trailing whitespace (the file's newline) removed; never quoted in
        /// a problem (it is a secret).
        func headerValue(_ file: String, path: String) -> String? {
            guard let contents = FileManager.default.contents(atPath: file) else {
                problems.append("\(path): cannot read \(file)")
                return nil
            }
            var value = String(decoding: contents, as: UTF8.self)
            while let last = value.last, last.isWhitespace { value.removeLast() }
            guard !value.isEmpty, Self.isFieldValue(value) else {
                problems.append("\(path): \(file) must hold one line of visible characters, spaces and tabs")
                return nil
            }
            return value
        }
        for (index, app) in apps.enumerated() {
            for (position, target) in app.forwarding.enumerated() {
                var headers = target.headers
                for (name, file) in target.headerFiles {
                    headers[name] = headerValue(file, path: "apps[\(index)].forwarding[\(position)].headerFiles.\(name)")
                }
                targets.append(
                    OutboundTarget(
                        row: .init(
                            kind: OutboundStore.forwardJobKind,
                            bundleId: app.bundleId,
                            url: target.url,
                            environments: target.environments ?? app.environments,
                            events: [],
                            forwardForgotten: target.forwardForgotten
                        ),
                        timeout: target.timeout.duration,
                        headers: headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
                        secrets: []
                    )
                )
            }
            for (position, webhook) in app.webhooks.enumerated() {
                let path = "apps[\(index)].webhooks[\(position)]"
                let current = secret(webhook.secretFile, path: path + ".secretFile")
                let previous = webhook.previousSecretFile.map { secret($0, path: path + ".previousSecretFile") }
                guard let current, previous.map({ $0 != nil }) ?? true else { continue }
                targets.append(
                    OutboundTarget(
                        row: .init(
                            kind: OutboundStore.webhookJobKind,
                            bundleId: app.bundleId,
                            url: webhook.url,
                            environments: webhook.environments ?? app.environments,
                            events: webhook.events ?? WebhookEvent.defaults.map(\.rawValue)
                        ),
                        timeout: webhook.timeout.duration,
                        headers: [],
                        secrets: [current] + (previous.flatMap { $0 }.map { [$0] } ?? [])
                    )
                )
            }
        }
        if !problems.isEmpty {
            throw ConfigError("outbound secrets (webhook secrets, forwarding header files):\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
        return targets
    }
}
