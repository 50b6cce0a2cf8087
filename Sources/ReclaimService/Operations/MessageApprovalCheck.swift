import AsyncHTTPClient
import Foundation
import Logging
import ReclaimDomain

/// `reclaim campaigns check`'s look at the Retention Messaging messages the config names (cancel-sheet answers,
/// campaigns' and grants' `messageIdentifier`, apps' `defaultMessageIdentifier`): Apple shows its own default, with no
/// error anywhere, when a realtime answer names a message that is not `APPROVED` ("All messages and images need to be in
/// an APPROVED state for the system to display them to customers"). So each is looked up in Get Message List for apps
/// with `serverAPI`; an app without it gets a line saying its messages were not checked.
enum MessageApprovalCheck {
    /// Each app's message identifiers as the config names them, with where.
    static func named(in config: ReclaimConfig) -> [String: [(id: String, by: String)]] {
        var named: [String: [(id: String, by: String)]] = [:]
        for app in config.apps {
            if let id = app.defaultMessageIdentifier { named[app.bundleId, default: []].append((id, "app \(app.bundleId) defaultMessageIdentifier")) }
        }
        for campaign in config.campaigns {
            if campaign.isCancelSheet {
                for variant in campaign.answeringVariants() {
                    guard let id = variant.answer?.messageIdentifier, !id.isEmpty else { continue }
                    let arm = variant.id.isEmpty ? "" : " variant \(variant.id)"
                    named[campaign.app, default: []].append((id, "campaign \(campaign.id)\(arm)"))
                }
            } else if let id = campaign.messageIdentifier {
                named[campaign.app, default: []].append((id, "campaign \(campaign.id)"))
            }
        }
        return named
    }

    /// For apps that declare `retentionMessaging`: each product a cancel-sheet campaign names (`conditions.products`)
    /// needs a default message in every locale the app's `defaults` list (Apple: "the system requires a default
    /// message for every product in each locale where you provide real-time retention messages").
    static func missingDefaults(in config: ReclaimConfig) -> [String] {
        var problems: [String] = []
        for app in config.apps {
            guard let messaging = app.retentionMessaging else { continue }
            problems += messaging.imageProblems().map { "app \(app.bundleId) retentionMessaging: \($0)" }
            let configured = Set(messaging.defaults.map { "\($0.productId) \($0.locale)" })
            for campaign in config.campaigns where campaign.isCancelSheet && campaign.app == app.bundleId {
                for product in campaign.conditions.products ?? [] {
                    for locale in messaging.locales.sorted() where !configured.contains("\(product) \(locale)") {
                        problems.append(
                            "campaign \(campaign.id): product \(product) has no default message in \(locale) (app \(app.bundleId)'s retentionMessaging.defaults)"
                        )
                    }
                }
            }
        }
        return problems
    }

    /// Lines to print; throws a ``ConfigError`` listing every identifier Apple does not hold as APPROVED.
    static func run(_ config: ReclaimConfig, logger: Logger) async throws -> [String] {
        let named = named(in: config)
        // What the config alone shows is reported before Apple is asked anything.
        let missing = missingDefaults(in: config)
        if !missing.isEmpty { throw ConfigError(missing.joined(separator: "\n")) }
        guard !named.isEmpty else { return [] }
        var lines: [String] = []
        var problems: [String] = []
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        // No database here: this process's own pace (one call per app).
        let pacer = AppleAPIPacer(database: nil, logger: logger)
        for app in config.apps where named[app.bundleId] != nil {
            let uses = named[app.bundleId] ?? []
            guard app.serverAPI != nil else {
                lines.append(
                    "messages of \(app.bundleId) not checked with Apple (no serverAPI: Get Message List needs an In-App Purchase key): "
                        + "\(Set(uses.map(\.id)).count) identifier(s) checked for form only"
                )
                continue
            }
            // Messages belong to the app, not to an environment: Production's API when the app accepts it.
            let environment = app.environments.contains("Production") ? "Production" : app.environments.first ?? "Production"
            let list: AppStoreAPI.MessageList
            do {
                list = try await AppStoreServerAPIClient(app: app, environment: environment, http: http, pacer: pacer, logger: logger).messageList()
            } catch {
                try? await http.shutdown()
                throw error
            }
            var states: [String: String] = [:]
            for item in list.messageIdentifiers ?? [] {
                if let id = item.messageIdentifier?.lowercased() { states[id] = item.messageState ?? "unknown" }
            }
            let before = problems.count
            for (id, by) in uses {
                switch states[id.lowercased()] {
                case "APPROVED": continue
                case let state?: problems.append("\(by): message \(id) is \(state) at Apple, not APPROVED: Apple would show its default instead")
                case nil: problems.append("\(by): message \(id) is not among the app's messages at Apple (a typo, or never uploaded)")
                }
            }
            if problems.count == before {
                lines.append("messages of \(app.bundleId): \(Set(uses.map(\.id)).count) identifier(s) APPROVED at Apple")
            }
        }
        try? await http.shutdown()
        if !problems.isEmpty { throw ConfigError(problems.joined(separator: "\n")) }
        return lines
    }
}
