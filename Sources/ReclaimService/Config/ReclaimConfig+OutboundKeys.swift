// The keys of outbound delivery: an app's `forwarding` targets and `webhooks`, and the top-level `forwarding`
// section that governs both.
import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// `apps[].forwarding[]`: another receiver of the app's notifications (its own backend, a subscription
    /// platform), sent each stored notification byte for byte.
    public struct ForwardingTarget: Decodable, Sendable {
        public var url: String
        /// Environments whose notifications go there; nil: every environment the app accepts.
        public var environments: [String]?
        /// One attempt's limit, from connecting to the answer's last byte.
        public var timeout: ConfigDuration = ConfigDuration(seconds: 10)
        /// Extra request headers (e.g. a bearer token the receiver expects).
        public var headers: [String: String] = [:]
        /// Extra request headers whose values are read from files (a secret kept out of the config: a Kubernetes
        /// Secret, a systemd credential), trailing whitespace removed; the `*File` convention of the other secrets.
        public var headerFiles: [String: String] = [:]
        /// Whether Apple's notifications about a subscriber forgotten on request (`reclaim subscribers forget`) go
        /// there (docs/privacy.md): true, the default, forwards the complete body (the receiver is usually the team's
        /// own entitlement system, and a forgotten subscriber may still be paying) and keeps nothing of it once sent;
        /// false forwards nothing about them.
        public var forwardForgotten = true

        enum CodingKeys: String, ConfigKeys { case url, environments, timeout, headers, headerFiles, forwardForgotten }

        public init(
            url: String,
            environments: [String]? = nil,
            timeout: ConfigDuration = ConfigDuration(seconds: 10),
            headers: [String: String] = [:]
        ) {
            self.url = url
            self.environments = environments
            self.timeout = timeout
            self.headers = headers
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            url = try container.decode(String.self, forKey: .url)
            environments = try container.decodeIfPresent([String].self, forKey: .environments)
            timeout = try container.decodeDurationIfPresent(forKey: .timeout) ?? timeout
            headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? headers
            headerFiles = try container.decodeIfPresent([String: String].self, forKey: .headerFiles) ?? headerFiles
            forwardForgotten = try container.decodeIfPresent(Bool.self, forKey: .forwardForgotten) ?? forwardForgotten
        }
    }

    /// `apps[].webhooks[]`: a receiver of Reclaim's own events, signed as Standard Webhooks.
    public struct Webhook: Decodable, Sendable {
        public var url: String
        /// A file holding the signing secret, `whsec_<base64>` (`reclaim webhooks new-secret`).
        public var secretFile: String
        /// During a rotation: the old secret's file. Both sign every message until it is removed.
        public var previousSecretFile: String?
        /// Event types sent; nil: every type but the opt-in `notification.refused`.
        public var events: [String]?
        /// Environments whose events go there; nil: every environment the app accepts.
        public var environments: [String]?
        public var timeout: ConfigDuration = ConfigDuration(seconds: 10)

        enum CodingKeys: String, ConfigKeys { case url, secretFile, previousSecretFile, events, environments, timeout }

        public init(url: String, secretFile: String, previousSecretFile: String? = nil, events: [String]? = nil, environments: [String]? = nil) {
            self.url = url
            self.secretFile = secretFile
            self.previousSecretFile = previousSecretFile
            self.events = events
            self.environments = environments
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            url = try container.decode(String.self, forKey: .url)
            secretFile = try container.decode(String.self, forKey: .secretFile)
            previousSecretFile = try container.decodeIfPresent(String.self, forKey: .previousSecretFile)
            events = try container.decodeIfPresent([String].self, forKey: .events)
            environments = try container.decodeIfPresent([String].self, forKey: .environments)
            timeout = try container.decodeDurationIfPresent(forKey: .timeout) ?? timeout
        }
    }

    /// The top-level `forwarding` section: rules for every forwarding target and webhook.
    public struct Forwarding: Decodable, Sendable {
        /// Allow targets on loopback, private, link-local and unique-local addresses (and `localhost`). Off: such a
        /// URL is refused at start-up, so a config copied from a test setup cannot post subscribers' data inward.
        public var allowPrivate = false
        /// Requests in flight to one target from one worker process.
        public var concurrency = 8

        public init(allowPrivate: Bool = false, concurrency: Int = 8) {
            self.allowPrivate = allowPrivate
            self.concurrency = concurrency
        }

        enum CodingKeys: String, ConfigKeys { case allowPrivate, concurrency }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            allowPrivate = try container.decodeIfPresent(Bool.self, forKey: .allowPrivate) ?? allowPrivate
            concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency) ?? concurrency
        }
    }
}
