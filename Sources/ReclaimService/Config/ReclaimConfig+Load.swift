import Foundation
import ReclaimDomain
import Yams

extension ReclaimConfig {
    /// Environments Apple sends.
    static let knownEnvironments: Set<String> = ["Production", "Sandbox", "Xcode", "LocalTesting"]

    /// Parses YAML text and validates it, reporting every problem at once: a YAML syntax error with its line and
    /// column; otherwise each section, and each app and campaign, is decoded on its own so that one mistake does
    /// not hide the next; then the checks across sections.
    public static func parse(yaml: String, source: String = "config") throws -> ReclaimConfig {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch YamlError.duplicatedKeysInMapping(let duplicates, let context) {
            // A typo must never quietly change a setting: Yams 5 kept the last of two equal keys. Yams 6 refuses them;
            // its own message quotes the whole file (header values included), so only the keys and the place are said.
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            throw ConfigError(
                "\(source): not valid YAML: \(context.mark.line):\(context.mark.column): the key \(keys) is written twice in one mapping"
            )
        } catch {
            throw ConfigError("\(source): not valid YAML: \(error)")
        }
        var config = ReclaimConfig()
        if let root {
            guard root.mapping != nil else {
                throw ConfigError(
                    "\(source): the top level must be a mapping with apps, campaigns, server, worker, offers, reconciliation, database, forwarding"
                )
            }
            var problems = Self.nulProblems(root, at: "")
            let sections = CodingKeys.allCases.map(\.stringValue)
            for case .scalar(let key) in root.mapping?.keys.map({ $0 }) ?? [] where !sections.contains(key.string) {
                let nearest = ConfigKeySuggestion.nearest(to: key.string, among: sections).map { "; did you mean `\($0)`?" } ?? ""
                problems.append("\(key.string): unknown key\(nearest) (known here: \(sections.joined(separator: ", ")))")
            }
            config.apps = Self.decodeList(App.self, root["apps"], at: "apps", problems: &problems)
            config.campaigns = Self.decodeList(Campaign.self, root["campaigns"], at: "campaigns", problems: &problems)
            config.server = Self.decode(Server.self, root["server"], at: "server", problems: &problems) ?? Server()
            config.worker = Self.decode(Worker.self, root["worker"], at: "worker", problems: &problems) ?? Worker()
            config.offers = Self.decode(Offers.self, root["offers"], at: "offers", problems: &problems) ?? Offers()
            config.reconciliation =
                Self.decode(Reconciliation.self, root["reconciliation"], at: "reconciliation", problems: &problems) ?? Reconciliation()
            config.database = Self.decode(DatabaseSettings.self, root["database"], at: "database", problems: &problems) ?? DatabaseSettings()
            config.forwarding = Self.decode(Forwarding.self, root["forwarding"], at: "forwarding", problems: &problems) ?? Forwarding()
            if !problems.isEmpty {
                throw ConfigError("\(source):\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
            }
        }
        try config.validate(source: source)
        return config
    }

    /// Every key or value holding U+0000, by its path: campaign ids, offer identifiers and target URLs are mirrored
    /// into PostgreSQL, which cannot store it (a NUL in a campaign id kept the server from ever becoming ready).
    private static func nulProblems(_ node: Node, at path: String) -> [String] {
        let here = path.isEmpty ? "(top level)" : path
        switch node {
        case .scalar(let scalar):
            return scalar.string.utf8.contains(0) ? ["\(here): holds the character U+0000 (NUL), which cannot be stored"] : []
        case .mapping(let mapping):
            return mapping.flatMap { key, value -> [String] in
                let name = LogText.bounded(key.string ?? "?", limit: 60)
                let child = path.isEmpty ? name : "\(path).\(name)"
                return nulProblems(key, at: child) + nulProblems(value, at: child)
            }
        case .sequence(let sequence):
            return sequence.enumerated().flatMap { index, element in nulProblems(element, at: "\(path)[\(index)]") }
        default:
            return []
        }
    }

    /// Decodes one node (nil when absent), recording a problem at `path` when it does not decode.
    private static func decode<T: Decodable>(_ type: T.Type, _ node: Node?, at path: String, problems: inout [String]) -> T? {
        guard let node else { return nil }
        let unknown = UnknownConfigKeys()
        defer { problems += unknown.found.map { "\(Self.path($0.codingPath, from: path)): \($0.message)" } }
        do {
            return try YAMLDecoder().decode(T.self, from: try Yams.serialize(node: node), userInfo: [UnknownConfigKeys.userInfoKey: unknown])
        } catch let error as DecodingError {
            problems.append(Self.describe(error, at: path))
        } catch {
            problems.append("\(path): \(error)")
        }
        return nil
    }

    /// Decodes each element of a list on its own, so every broken element is reported.
    private static func decodeList<T: Decodable>(_ type: T.Type, _ node: Node?, at path: String, problems: inout [String]) -> [T] {
        guard let node else { return [] }
        guard let sequence = node.sequence else {
            problems.append("\(path): expected a list")
            return []
        }
        return sequence.enumerated().compactMap { index, element in decode(T.self, element, at: "\(path)[\(index)]", problems: &problems) }
    }

    /// Loads the file at `path` (the value of `RECLAIM_CONFIG`).
    public static func load(path: String) throws -> ReclaimConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("cannot read config file \(path)")
        }
        return try parse(yaml: String(decoding: data, as: UTF8.self), source: path)
    }

    /// Checks what decoding cannot: references between sections and value ranges.
    public func validate(source: String = "config") throws {
        var problems: [String] = []
        var bundles = Set<String>()
        for app in apps {
            if app.bundleId.isEmpty {
                problems.append("an app has an empty bundleId")
            } else if let problem = Self.bundleIdProblem(app.bundleId) {
                problems.append("app \(app.bundleId.debugDescription): bundleId \(problem)")
            }
            if !bundles.insert(app.bundleId).inserted { problems.append("app \(app.bundleId) is listed twice") }
            for environment in app.environments where !Self.knownEnvironments.contains(environment) {
                problems.append(
                    "app \(app.bundleId): unknown environment \(environment) (use \(Self.knownEnvironments.sorted().joined(separator: ", ")))"
                )
            }
            if app.environments.contains("Production") && app.appAppleId == nil {
                problems.append("app \(app.bundleId): appAppleId is required when Production is accepted")
            }
            var keyIds = Set<String>()
            for key in app.signingKeys where !keyIds.insert(key.keyId).inserted {
                problems.append("app \(app.bundleId): signing key \(key.keyId) is listed twice")
            }
            if let api = app.serverAPI {
                if api.keyId.isEmpty || api.issuerId.isEmpty || api.file.isEmpty {
                    problems.append("app \(app.bundleId): serverAPI needs keyId, issuerId and file")
                }
                if let base = api.baseURL, let problem = Self.serverAPIBaseURLProblem(base) {
                    problems.append("app \(app.bundleId): serverAPI.baseURL \(base) \(problem)")
                }
            }
            if app.setAppAccountToken != .off, app.serverAPI == nil {
                problems.append(
                    "app \(app.bundleId): setAppAccountToken needs serverAPI (an In-App Purchase key): Reclaim calls Apple's Set App Account Token with it"
                )
            }
            if app.retentionMessaging != nil, app.serverAPI == nil {
                problems.append(
                    "app \(app.bundleId): retentionMessaging needs serverAPI (an In-App Purchase key): reclaim messaging apply calls Apple with it"
                )
            }
            if let declared = app.retentionMessaging.map({ Set($0.messages.map(\.id)) }), !declared.isEmpty {
                // An app that declares its messages declares all it uses: a typo would otherwise reach Apple as an unknown
                // message, which Apple answers with its own default.
                for (id, by) in MessageApprovalCheck.named(in: self)[app.bundleId] ?? [] where !declared.contains(id.lowercased()) {
                    problems.append("\(by): message \(id) is not one of app \(app.bundleId)'s retentionMessaging.messages")
                }
            }
            if let refunds = app.refunds, refunds.holdoutPercent > 0, refunds.fallback == nil {
                problems.append(
                    "app \(app.bundleId): refunds.holdoutPercent \(refunds.holdoutPercent) needs refunds.default (deliveryStatus, sampleContentProvided): held-out requests that no policy would have matched are answered with the facts you vouch for there, and Reclaim does not know them"
                )
            }
            if app.refunds != nil, app.serverAPI == nil {
                problems.append(
                    "app \(app.bundleId): refunds needs serverAPI (an In-App Purchase key): answers go through Send Consumption Information"
                )
            }
            problems += app.discountBudget?.problems(app: app.bundleId) ?? []
            problems += app.cancelReasonProblems()
        }
        if reconciliation.interval.seconds != 0 && reconciliation.interval.seconds < 60 {
            problems.append("reconciliation.interval must be 0s (off) or at least 1m")
        }
        if reconciliation.lookBack.seconds < 3600 || reconciliation.lookBack.seconds > 180 * 86_400 {
            problems.append("reconciliation.lookBack must be from 1h to 180d (Apple keeps 180 days of history in Production, 30 in Sandbox)")
        }
        problems += campaignProblems()
        problems += outboundProblems()
        if !Server.retentionBudgetLimits.contains(server.retentionBudgetMilliseconds) {
            problems.append(
                "server.retentionBudgetMilliseconds must be from 10 to 700: it bounds the whole Retention Messaging answer, and Apple waits about 700 ms for it (its performance test fails slower URLs)"
            )
        }
        if !(1...500).contains(worker.concurrency) { problems.append("worker.concurrency must be from 1 to 500") }
        if !(1...64).contains(worker.callConcurrency) { problems.append("worker.callConcurrency must be from 1 to 64") }
        if !(1...10_000).contains(worker.batchSize) { problems.append("worker.batchSize must be from 1 to 10000") }
        if !(0...10_000_000).contains(server.rejectedInputsKept) { problems.append("server.rejectedInputsKept must be from 0 to 10000000") }
        // Apple accepts a promotional offer signature for 24 hours: a stored one is re-signed before that.
        if offers.resignAfter.seconds < 60 || offers.resignAfter.seconds > 23 * 3600 {
            problems.append("offers.resignAfter must be from 1m to 23h (Apple accepts a signature for 24 hours)")
        }
        if worker.maxAttempts < 1 { problems.append("worker.maxAttempts must be at least 1") }
        if server.maxBodyBytes < 1024 { problems.append("server.maxBodyBytes must be at least 1024") }
        if server.maxConnections < 1 { problems.append("server.maxConnections must be at least 1") }
        if server.maxPendingNotifications < 1 { problems.append("server.maxPendingNotifications must be at least 1") }
        if server.idleTimeout.seconds < 1 { problems.append("server.idleTimeout must be at least 1s") }
        if server.rateLimitPerKey < 1 { problems.append("server.rateLimitPerKey must be at least 1") }
        if server.rateLimitBurst < 1 { problems.append("server.rateLimitBurst must be at least 1") }
        if server.failedAuthenticationsPerMinute < 1 { problems.append("server.failedAuthenticationsPerMinute must be at least 1") }
        if server.headerTimeout.seconds < 1 { problems.append("server.headerTimeout must be at least 1s") }
        if server.bodyTimeout.seconds < 1 { problems.append("server.bodyTimeout must be at least 1s") }
        problems += TrustedProxies.problems(server.trustedProxies)
        // Ingest, the worker lanes, the three LISTEN sessions (the workers', the outbound sender's, the live-offer
        // index's, each held for good) and the background tasks each need one.
        // worker.concurrency is bounded above, so `+ 5` cannot overflow.
        if server.databaseConnections > 1000 || server.databaseConnections < min(worker.concurrency, 500) + 5 {
            problems.append(
                "server.databaseConnections must be at most 1000 and at least worker.concurrency + 5 (\(min(worker.concurrency, 500) + 5)): every worker lane, the three LISTEN sessions and ingest need one"
            )
        }
        for (key, value, range) in [
            ("acquireTimeout", database.acquireTimeout, 1...300), ("queryTimeout", database.queryTimeout, 1...3600),
            ("transactionTimeout", database.transactionTimeout, 1...3600),
        ] as [(String, ConfigDuration, ClosedRange<Int64>)] where !range.contains(value.seconds) {
            problems.append("database.\(key) must be from \(range.lowerBound)s to \(range.upperBound)s")
        }
        if !problems.isEmpty {
            throw ConfigError("\(source):\n" + problems.map { "  - \($0)" }.joined(separator: "\n"))
        }
    }

    /// One line for a decoding error: the full path of the key and what was wrong, in words.
    private static func describe(_ error: DecodingError, at base: String) -> String {
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            Self.path(context.codingPath + (last.map { [$0] } ?? []), from: base)
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context, key)): missing (required)"
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(Self.kind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(path(context)): expected \(Self.kind(of: type)), found nothing"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError as? ConfigError { return "\(path(context)): \(underlying)" }
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(base): \(error)"
        }
    }

    /// `campaigns[0].cooldown`, not `campaigns.[0].cooldown`.
    private static func path(_ codingPath: [any CodingKey], from base: String) -> String {
        codingPath.reduce(into: base) { path, key in
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
    }

    /// A YAML value's expected kind in words.
    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type: "a whole number"
        case is Bool.Type: "true or false"
        case is String.Type: "text"
        case is [Any].Type: "a list"
        default: "\(type)"
        }
    }
}

extension ReclaimConfig {
    /// Why `serverAPI.baseURL` is refused, or nil: https only, because every request carries the key's bearer token
    /// (a signed JWT good for up to an hour, for every endpoint of the app); plain http only to this machine itself
    /// (a test's stand-in, a local proxy), where nothing travels on a network.
    static func serverAPIBaseURLProblem(_ base: String) -> String? {
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false), !host.isEmpty else {
            return "is not an https URL"
        }
        switch scheme {
        case "https": return nil
        case "http" where isLoopback(host): return nil
        case "http":
            return "is plain http to another machine: the bearer token would travel in clear; use https (http is kept for loopback addresses)"
        default: return "is not an https URL"
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.first == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension ReclaimConfig {
    /// Why a bundle id is not one Apple issues, or nil. Apple: "A bundle ID string needs to be a uniform type
    /// identifier (UTI) that contains only alphanumeric characters (A-Z, a-z, 0-9), hyphens (-), and/or periods (.).
    /// The string should be in reverse-DNS format." (glossary, "bundle ID"). Checked before a bundle id names a file
    /// (`reclaim dev`'s `app-keys/<bundle id>`) or a label: no slash, no `..`, nothing a path could climb with.
    static func bundleIdProblem(_ bundleId: String) -> String? {
        guard bundleId.utf8.count <= 155 else { return "is longer than 155 characters" }
        guard bundleId.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == ".") }) else {
            return "may hold only A-Z, a-z, 0-9, hyphens and periods (Apple's bundle ID rule)"
        }
        if bundleId.hasPrefix(".") || bundleId.hasSuffix(".") || bundleId.contains("..") {
            return "must not start or end with a period or hold two in a row (reverse-DNS, e.g. com.example.app)"
        }
        return nil
    }
}
