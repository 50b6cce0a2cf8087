import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import ReclaimStore
import Synchronization

/// `reclaim messaging plan | apply | status | test`: an app's Retention Messaging set-up at Apple, as its
/// `retentionMessaging` declares it, through the paced App Store Server API client.
///
/// Apple keeps messages, images, default messages and the realtime URL per environment: "In the sandbox testing
/// environment, the system automatically sets message and image states to APPROVED", and "The URL it provides is
/// specific to the environment (sandbox or production) you use to call Get Realtime URL". So each runs per environment.
/// Nothing is deleted: a message at Apple the config does not declare is reported and left alone.
///
/// Apple has no update: a message or image is uploaded once under its id, and Get Message List returns ids and review
/// states only. So Reclaim keeps, per environment and id, a hash of what it uploaded (`reclaim.messaging_uploads`):
/// a declared text that changed under an uploaded id is refused with what to do (a new id), a 409 after an answer that
/// was lost counts as uploaded, and ids at Apple that Reclaim never uploaded are reported as such.
public enum MessagingTasks {
    public enum Change: Sendable, Equatable, CustomStringConvertible {
        case uploadImage(id: String, file: String, size: String)
        case uploadMessage(id: String)
        case configureDefault(productId: String, locale: String, message: String)
        case configureRealtimeURL(String)

        public var description: String {
            switch self {
            case .uploadImage(let id, let file, let size): "upload image \(id) (\(file), \(size))"
            case .uploadMessage(let id): "upload message \(id)"
            case .configureDefault(let product, let locale, let message): "set the default message of \(product) in \(locale) to \(message)"
            case .configureRealtimeURL(let url): "set the realtime URL to \(url)"
            }
        }
    }

    public struct Plan: Sendable {
        public let environment: String
        public var changes: [Change] = []
        /// Defaults left for a later apply: their message is not APPROVED yet.
        public var waiting: [String] = []
        /// What Apple holds that the config does not name, and other remarks.
        public var notes: [String] = []
        /// What apply refuses to do, with what to do instead (a changed text under an uploaded id).
        public var refused: [String] = []
    }

    /// The hash Reclaim keeps of an upload: the message's JSON with sorted keys, or the PNG and its size.
    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    static func sha256(_ message: ReclaimConfig.Message) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return sha256(try encoder.encode(message.upload))
    }

    static func sha256(image file: String, size: String) throws -> String {
        guard let png = FileManager.default.contents(atPath: file) else { throw ConfigError("cannot read image \(file)") }
        return sha256(png + Data(size.utf8))
    }

    /// Each environment the app accepts that the App Store Server API has, Sandbox first (Apple: configure the sandbox URL
    /// and pass the performance test before the production URL), or the one asked for.
    static func environments(_ app: ReclaimConfig.App, _ environment: String?) throws -> [String] {
        if let environment {
            guard AppStoreAPI.baseURL(for: environment) != nil, app.environments.contains(environment) else {
                throw ConfigError("app \(app.bundleId) does not accept \(environment) (Production or Sandbox, among its environments)")
            }
            return [environment]
        }
        return ["Sandbox", "Production"].filter(app.environments.contains)
    }

    static func declared(_ config: ReclaimConfig, app bundleId: String) throws -> (ReclaimConfig.App, ReclaimConfig.RetentionMessaging) {
        guard let app = config.apps.first(where: { $0.bundleId == bundleId }) else { throw ConfigError("app \(bundleId) is not configured") }
        guard let messaging = app.retentionMessaging else {
            throw ConfigError("app \(bundleId) has no retentionMessaging: declare its messages, defaults and realtimeURL first (docs/campaigns.md)")
        }
        guard app.serverAPI != nil else { throw ConfigError("app \(bundleId) has no serverAPI: Retention Messaging needs an In-App Purchase key") }
        let problems = messaging.imageProblems()
        guard problems.isEmpty else { throw ConfigError(problems.map { "app \(bundleId) retentionMessaging: \($0)" }.joined(separator: "\n")) }
        return (app, messaging)
    }

    /// What apply would change in `client`'s environment; `uploads` is what Reclaim uploaded there before.
    static func changes(
        _ messaging: ReclaimConfig.RetentionMessaging,
        client: AppStoreServerAPIClient,
        uploads: [String: MessagingUploadStore.Upload]
    ) async throws -> Plan {
        var plan = Plan(environment: client.environment)
        /// A declared item Apple holds: compared with what Reclaim uploaded under its id.
        func compare(_ kind: String, _ id: String, sha: String, state: String) {
            guard let prior = uploads["\(kind) \(id)"] else {
                plan.notes.append("\(kind) \(id) (\(state)) was uploaded outside Reclaim: its content cannot be compared with the config's")
                return
            }
            if prior.sha256 != sha {
                plan.refused.append(
                    "\(kind) \(id) changed in the config since Reclaim uploaded it (\(state) at Apple), and Apple has no update: an id is uploaded once. Give the new \(kind == "message" ? "text" : "image") a new id (a new UUID) and name that id wherever this one is named"
                )
            }
            if state == "REJECTED" {
                plan.notes.append(
                    "\(kind) \(id) was REJECTED in Apple's review and will never be approved: change it under a new id (a new UUID) and apply again"
                )
            }
        }
        var messageStates: [String: String] = [:]
        for item in try await client.messageList().messageIdentifiers ?? [] {
            if let id = item.messageIdentifier?.lowercased() { messageStates[id] = item.messageState ?? "unknown" }
        }
        let images = messaging.messages.flatMap(\.images)
        if !images.isEmpty {
            var imageStates: [String: String] = [:]
            for item in try await client.imageList().imageIdentifiers ?? [] {
                if let id = item.imageIdentifier?.lowercased() { imageStates[id] = item.imageState ?? "unknown" }
            }
            var seen = Set<String>()
            for (image, size) in images where seen.insert(image.id).inserted {
                if let state = imageStates[image.id] {
                    compare("image", image.id, sha: try sha256(image: image.file, size: size), state: state)
                } else {
                    plan.changes.append(.uploadImage(id: image.id, file: image.file, size: size))
                }
            }
        }
        for message in messaging.messages {
            if let state = messageStates[message.id] {
                compare("message", message.id, sha: try sha256(message), state: state)
            } else {
                plan.changes.append(.uploadMessage(id: message.id))
            }
        }
        for id in messageStates.keys.sorted() where !messaging.messages.contains(where: { $0.id == id }) {
            plan.notes.append("message \(id) (\(messageStates[id] ?? "?")) is at Apple but not declared: left alone")
        }
        for entry in messaging.defaults {
            let current = try await client.defaultMessage(productId: entry.productId, locale: entry.locale)?.lowercased()
            guard current != entry.message else { continue }
            // "If either the message or the image isn't in an APPROVED state, the request fails with an error"
            // (MessageNotApprovedError, 4030017); the Sandbox approves an upload at once.
            let state = messageStates[entry.message] ?? (client.environment == "Sandbox" ? "APPROVED" : "PENDING")
            if state == "APPROVED" {
                plan.changes.append(.configureDefault(productId: entry.productId, locale: entry.locale, message: entry.message))
            } else if state == "REJECTED" {
                plan.waiting.append(
                    "the default of \(entry.productId) in \(entry.locale): message \(entry.message) was REJECTED at Apple and will never be set; give the message a new id and name it here"
                )
            } else {
                plan.waiting.append(
                    "the default of \(entry.productId) in \(entry.locale): message \(entry.message) is \(state) at Apple; a later apply sets it once Apple approves it"
                )
            }
        }
        if let wanted = messaging.realtimeURL, try await client.realtimeURL() != wanted {
            plan.changes.append(.configureRealtimeURL(wanted))
        }
        return plan
    }

    /// Runs `body` with a client per environment.
    static func withClients<T: Sendable>(
        config: ReclaimConfig,
        url: DatabaseURL,
        app bundleId: String,
        environment: String?,
        logger: Logger,
        _ body: @Sendable (ReclaimConfig.RetentionMessaging, [AppStoreServerAPIClient], Database) async throws -> T
    ) async throws -> T {
        let (app, messaging) = try declared(config, app: bundleId)
        let environments = try environments(app, environment)
        return try await RecoveryTasks.withDependencies(config: config, url: url, logger: logger) { dependencies, http in
            let clients = try environments.map {
                try AppStoreServerAPIClient(app: app, environment: $0, http: http, pacer: dependencies.applePacer, logger: logger)
            }
            return try await body(messaging, clients, dependencies.postgres)
        }
    }

    static func uploads(_ client: AppStoreServerAPIClient, _ database: Database, logger: Logger) async throws -> [String: MessagingUploadStore.Upload]
    {
        try await MessagingUploadStore.uploads(bundleId: client.bundleId, environment: client.environment, database: database, logger: logger)
    }

    public static func plan(config: ReclaimConfig, url: DatabaseURL, app: String, environment: String?, logger: Logger) async throws -> [Plan] {
        try await withClients(config: config, url: url, app: app, environment: environment, logger: logger) { messaging, clients, database in
            var plans: [Plan] = []
            for client in clients {
                plans.append(try await changes(messaging, client: client, uploads: try await uploads(client, database, logger: logger)))
            }
            return plans
        }
    }

    /// Makes Apple hold what the config declares; returns what was done, environment by environment.
    public static func apply(
        config: ReclaimConfig,
        url: DatabaseURL,
        app: String,
        environment: String?,
        logger: Logger,
        report: @escaping @Sendable (String) -> Void
    ) async throws -> [Plan] {
        guard environment != nil else {
            throw ConfigError(
                "reclaim messaging apply changes one environment at a time: give --environment Sandbox (first) or --environment Production (which also sets the realtime URL your customers' cancel sheets reach); plan and status without it show every environment"
            )
        }
        return try await withClients(config: config, url: url, app: app, environment: environment, logger: logger) { messaging, clients, database in
            var done: [Plan] = []
            for client in clients {
                let uploads = try await uploads(client, database, logger: logger)
                var plan = try await changes(messaging, client: client, uploads: uploads)
                guard plan.refused.isEmpty else {
                    throw ConfigError(plan.refused.map { "\(client.environment): refused: \($0)" }.joined(separator: "\n"))
                }
                /// Records the upload's hash before sending (a lost answer leaves it behind), sends, and records its
                /// landing; a 409 (Apple holds the id already) for content Reclaim itself tried to upload (an earlier
                /// apply's attempt of the same content, or an earlier attempt of this call whose answer was lost) is
                /// that lost answer's upload: done. A 409 on Reclaim's first attempt ever is an upload made outside
                /// Reclaim: said so, not recorded as Reclaim's.
                func upload(_ kind: String, _ id: String, sha: String, _ send: (AppStoreServerAPIClient) async throws -> Void) async throws {
                    func record(landed: Bool) async throws {
                        try await MessagingUploadStore.record(
                            bundleId: client.bundleId,
                            environment: client.environment,
                            kind: kind,
                            id: id,
                            sha256: sha,
                            landed: landed,
                            database: database,
                            logger: logger
                        )
                    }
                    let prior = uploads["\(kind) \(id)"]
                    try await record(landed: false)
                    let attempts = AttemptCount()
                    var counting = client
                    counting.beforeEachAttempt = { attempts.add() }
                    do {
                        try await send(counting)
                    } catch let error as AppStoreAPIError where error.status == 409 && (prior?.sha256 == sha || (prior == nil && attempts.value > 1))
                    {
                        report("\(client.environment): \(kind) \(id) is already at Apple (an earlier attempt's answer was lost): counted as uploaded")
                    } catch let error as AppStoreAPIError where error.status == 409 && prior == nil {
                        try await MessagingUploadStore.removeAttempt(
                            bundleId: client.bundleId,
                            environment: client.environment,
                            kind: kind,
                            id: id,
                            database: database,
                            logger: logger
                        )
                        report(
                            "\(client.environment): \(kind) \(id) was uploaded outside Reclaim (Apple holds the id already; Reclaim never sent it): not counted as Reclaim's, its content cannot be compared with the config's; give the config's text a new id to have Reclaim upload it"
                        )
                        return
                    }
                    try await record(landed: true)
                }

                var uploaded = false
                for change in plan.changes {
                    switch change {
                    case .uploadImage(let id, let file, let size):
                        guard let png = FileManager.default.contents(atPath: file) else { throw ConfigError("cannot read image \(file)") }
                        try await upload("image", id, sha: sha256(png + Data(size.utf8))) { try await $0.uploadImage(id, png: png, size: size) }
                    case .uploadMessage(let id):
                        guard let message = messaging.messages.first(where: { $0.id == id }) else { continue }
                        try await upload("message", id, sha: try sha256(message)) { try await $0.uploadMessage(id, message.upload) }
                        uploaded = true
                    case .configureDefault(let product, let locale, let message):
                        try await client.configureDefaultMessage(productId: product, locale: locale, messageIdentifier: message)
                    case .configureRealtimeURL(let wanted):
                        do {
                            try await client.configureRealtimeURL(wanted)
                        } catch let error as AppStoreAPIError where error.errorCode == 4_030_026 {
                            // ForbiddenNoPassingTestError: "Passing a performance test is required before setting a
                            // production URL."
                            plan.waiting.append(
                                "the realtime URL: Apple requires a passing performance test first (run reclaim messaging test --app \(client.bundleId) --transaction ID, in Sandbox), then apply again"
                            )
                            continue
                        }
                    }
                    report("\(client.environment): \(change)")
                }
                if uploaded {
                    // Defaults of messages just uploaded wait for Apple's review, except in Sandbox.
                    let again = try await changes(messaging, client: client, uploads: try await Self.uploads(client, database, logger: logger))
                    for change in again.changes {
                        guard case .configureDefault(let product, let locale, let message) = change else { continue }
                        try await client.configureDefaultMessage(productId: product, locale: locale, messageIdentifier: message)
                        report("\(client.environment): \(change)")
                        plan.changes.append(change)
                    }
                    plan.waiting = again.waiting + plan.waiting.filter { $0.hasPrefix("the realtime URL") }
                }
                for line in plan.waiting { report("\(client.environment): waiting: \(line)") }
                if plan.changes.isEmpty && plan.waiting.isEmpty { report("\(client.environment): nothing to change") }
                done.append(plan)
            }
            return done
        }
    }

    /// Each message's and image's review state, each default, the realtime URL.
    public static func status(config: ReclaimConfig, url: DatabaseURL, app: String, environment: String?, logger: Logger) async throws -> [String] {
        try await withClients(config: config, url: url, app: app, environment: environment, logger: logger) { messaging, clients, _ in
            var lines: [String] = []
            for client in clients {
                lines.append("\(client.environment):")
                for item in try await client.messageList().messageIdentifiers ?? [] {
                    let id = item.messageIdentifier?.lowercased() ?? "?"
                    let declared = messaging.messages.contains { $0.id == id } ? "" : " (not declared)"
                    lines.append("  message \(id): \(item.messageState ?? "?")\(declared)")
                }
                if messaging.messages.contains(where: { !$0.images.isEmpty }) {
                    for item in try await client.imageList().imageIdentifiers ?? [] {
                        lines.append("  image \(item.imageIdentifier?.lowercased() ?? "?"): \(item.imageState ?? "?")")
                    }
                }
                for entry in messaging.defaults {
                    let current = try await client.defaultMessage(productId: entry.productId, locale: entry.locale)
                    lines.append(
                        "  default \(entry.productId) \(entry.locale): \(current ?? "none")\(current?.lowercased() == entry.message ? "" : " (declared: \(entry.message))")"
                    )
                }
                lines.append("  realtime URL: \(try await client.realtimeURL() ?? "none")")
            }
            return lines
        }
    }

    /// Apple's performance test, in Sandbox ("The performance test runs only in the sandbox environment"), polled until
    /// it ends: true on PASS.
    public static func test(
        config: ReclaimConfig,
        url: DatabaseURL,
        app: String,
        originalTransactionId: String,
        poll: Duration = .seconds(10),
        logger: Logger,
        report: @escaping @Sendable (String) -> Void
    ) async throws -> Bool {
        try await withClients(config: config, url: url, app: app, environment: "Sandbox", logger: logger) { _, clients, _ in
            guard let client = clients.first else { return false }
            let started = try await client.initiatePerformanceTest(originalTransactionId: originalTransactionId)
            let total = started.config?.totalDuration.map { Double($0) / 1000 } ?? 300
            report(
                "performance test \(started.requestId) started: \(started.config?.totalRequests.map(String.init) ?? "?") requests over \(Int(total)) s, answers within \(started.config?.responseTimeThreshold.map { "\($0) ms" } ?? "about 700 ms"), \(started.config?.successRateThreshold.map { "\($0)%" } ?? "?") to pass"
            )
            let deadline = ContinuousClock.now + .seconds(total + 600)
            while true {
                let result = try await client.performanceTestResult(requestId: started.requestId)
                if let state = result.result, state != "PENDING" {
                    let times = result.responseTimes
                    report(
                        "\(state): success rate \(result.successRate.map { "\($0)%" } ?? "?"), response times average \(times?.average ?? 0) ms, p50 \(times?.p50 ?? 0), p90 \(times?.p90 ?? 0), p95 \(times?.p95 ?? 0), p99 \(times?.p99 ?? 0) ms (target \(result.target ?? "?"))"
                    )
                    for (reason, count) in (result.failures ?? [:]).sorted(by: { $0.key < $1.key }) { report("  \(count)× \(reason)") }
                    return state == "PASS"
                }
                report("pending: \(result.numPending.map(String.init) ?? "?") requests to go")
                guard ContinuousClock.now < deadline else {
                    report("no result \(Int(total)) s after the test's end: ask again later")
                    return false
                }
                try await Task.sleep(for: poll)
            }
        }
    }
}

/// Attempts one upload made (each attempt after its pacing slot, retries included).
final class AttemptCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
