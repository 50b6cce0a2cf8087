import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// `reclaim codes`: import App Store Connect's one-time-use offer codes into a pool, and each pool's counts.
public enum CodeTasks {
    /// What `reclaim codes import` is asked to do.
    public struct ImportRequest: Sendable {
        public var bundleId: String
        public var environment: String
        public var offer: String
        public var productId: String
        public var eligibility: [OfferCodes.Eligibility]
        public var expiresAt: Date
        /// nil: Apple's form, with the config's `appAppleId`.
        public var redemptionURL: String?
        public var file: String

        public init(
            bundleId: String,
            environment: String,
            offer: String,
            productId: String,
            eligibility: [OfferCodes.Eligibility],
            expiresAt: Date,
            redemptionURL: String?,
            file: String
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.offer = offer
            self.productId = productId
            self.eligibility = eligibility
            self.expiresAt = expiresAt
            self.redemptionURL = redemptionURL
            self.file = file
        }
    }

    /// Imports the file's codes. The config, when named, must configure the app (and gives its `appAppleId` for the
    /// redemption URL); without `redemptionURL` it is required. Never prints a code.
    public static func importCodes(_ request: ImportRequest, config: ReclaimConfig?, url: DatabaseURL, logger: Logger) async throws -> String {
        guard [AppStoreEnvironment.production.rawValue, AppStoreEnvironment.sandbox.rawValue].contains(request.environment) else {
            throw ConfigError("--environment must be Production or Sandbox, got \(request.environment)")
        }
        let app = config?.apps.first { $0.bundleId == request.bundleId }
        if config != nil, app == nil { throw ConfigError("\(request.bundleId) is not an app of the config") }
        let template: String
        if let given = request.redemptionURL {
            guard given.contains("{code}"), given.hasPrefix("https://") else {
                throw ConfigError("--redemption-url must be an https URL with {code} where the code goes")
            }
            template = given
        } else if let appAppleId = app?.appAppleId {
            template = OfferCodes.defaultRedemptionURL(appAppleId: appAppleId)
        } else {
            throw ConfigError(
                "no redemption URL: set the app's appAppleId in the config (RECLAIM_CONFIG) for Apple's form, or give --redemption-url with {code}"
            )
        }
        guard request.expiresAt > Date() else { throw ConfigError("--expires is in the past: these codes have expired") }
        guard let data = FileManager.default.contents(atPath: request.file) else { throw ConfigError("cannot read \(request.file)") }
        let codes = try OfferCodes.parseFile(String(decoding: data, as: UTF8.self))
        guard !codes.isEmpty else { throw ConfigError("\(request.file) holds no offer codes") }
        let pool = OfferCodeStore.Pool(
            bundleId: request.bundleId,
            environment: request.environment,
            offer: request.offer,
            productId: request.productId,
            eligibility: request.eligibility,
            redemptionURL: template
        )
        let imported = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { postgres in
            try await postgres.transaction(logger: logger, deadline: .seconds(300)) { connection in
                try await OfferCodeStore.importCodes(codes, into: pool, expiresAt: request.expiresAt, connection: connection, logger: logger)
            }
        }
        return "\(request.offer) (\(request.bundleId), \(request.environment)): \(imported.added) code\(imported.added == 1 ? "" : "s") added, "
            + "\(imported.alreadyInPool) already in the pool; they expire \(request.expiresAt.formatted(.iso8601))"
    }

    /// Each pool's counts, as text or JSON.
    public static func status(json: Bool, url: DatabaseURL, logger: Logger) async throws -> String {
        let pools = try await Database.withDatabase(url, maxConnections: 1, logger: logger) { postgres in
            try await postgres.withConnection(logger: logger) { try await OfferCodeStore.status(connection: $0, logger: logger) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return String(decoding: try encoder.encode(pools), as: UTF8.self)
        }
        guard !pools.isEmpty else { return "no offer-code pools: import one with reclaim codes import" }
        return pools.map { pool in
            let next = pool.nextExpiry.map { ", next expiry \($0.formatted(.iso8601))" } ?? ""
            return "\(pool.offer) [\(pool.bundleId), \(pool.environment)] \(pool.productId), for \(pool.eligibility.joined(separator: ",")): "
                + "\(pool.unused) unused, \(pool.issued) issued, \(pool.redeemed) redeemed, \(pool.expired) expired\(next); "
                + "\(pool.redeemedWithoutCode) redeemed without a code from Reclaim"
        }.joined(separator: "\n")
    }
}
