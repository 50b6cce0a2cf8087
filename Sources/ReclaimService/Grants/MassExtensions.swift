import AsyncHTTPClient
import Foundation
import Logging
import ReclaimDomain
import ReclaimStore

/// Outage make-goods (`reclaim extensions all`): Apple's Extend Subscription Renewal Dates for All Active Subscribers,
/// one product per request (Apple's `MassExtendRenewalDateRequest` takes one `productId`), products one after
/// another; each request recorded before Apple is asked, then its status polled until Apple says it is complete.
///
/// Apple: "Because the endpoint runs asynchronously, this response means the App Store received your request and is
/// processing it. The request may take multiple hours or days to complete, depending on the number of subscribers."
/// So a run can be stopped (Ctrl-C) and started again with the same `--request-id`: the row is found, Apple is not
/// asked a second time, and the polling goes on. The RENEWAL_EXTENDED notifications Apple sends for each subscriber
/// meanwhile update state and trigger no campaign (``MassExtensionStore/fromMassExtensions(_:connection:logger:)``);
/// the RENEWAL_EXTENSION/SUMMARY notification is matched to the request by its `requestIdentifier`.
public struct MassExtensions: Sendable {
    public struct Request: Sendable {
        public var bundleId: String
        public var environment: String
        public var productIds: [String]
        public var extendByDays: Int
        public var extendReasonCode: Int
        public var storefrontCountryCodes: [String]?
        public var reason: String
        /// Apple's `requestIdentifier`, for one product only; nil: a new UUID per product.
        public var requestIdentifier: String?
        public var actor: String

        public init(
            bundleId: String,
            environment: String,
            productIds: [String],
            extendByDays: Int,
            extendReasonCode: Int,
            storefrontCountryCodes: [String]? = nil,
            reason: String,
            requestIdentifier: String? = nil,
            actor: String
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.productIds = productIds
            self.extendByDays = extendByDays
            self.extendReasonCode = extendReasonCode
            self.storefrontCountryCodes = storefrontCountryCodes
            self.reason = reason
            self.requestIdentifier = requestIdentifier
            self.actor = actor
        }
    }

    /// After each status call: where the request stands.
    public struct Progress: Sendable {
        public var request: StoredMassExtension
        public var elapsed: TimeInterval
        public var done: Bool
    }

    public enum Outcome: Sendable {
        /// Apple completed it: its counts in `request`.
        case complete(StoredMassExtension)
        /// Apple accepted it; not waited for (`--no-wait`).
        case accepted(StoredMassExtension)
        /// Apple refused it (its error in Apple's words), now or when first asked.
        case refused(StoredMassExtension)
    }

    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    let dependencies: Dependencies
    let http: HTTPClient
    /// Between status calls (Apple allows one a second per app; a request takes hours).
    var pollEvery: Duration
    let logger: Logger

    public init(dependencies: Dependencies, http: HTTPClient, pollEvery: Duration = .seconds(60), logger: Logger) {
        self.dependencies = dependencies
        self.http = http
        self.pollEvery = pollEvery
        self.logger = logger
    }

    public func run(_ request: Request, wait: Bool, progress: @Sendable (Progress) -> Void) async throws -> [Outcome] {
        guard let app = dependencies.config.apps.first(where: { $0.bundleId == request.bundleId }) else {
            throw Refused(description: "app \(request.bundleId) is not configured")
        }
        guard app.serverAPI != nil else {
            throw Refused(description: "app \(request.bundleId) has no serverAPI: a renewal-date extension needs an In-App Purchase key")
        }
        guard app.environments.contains(request.environment), AppStoreAPI.baseURL(for: request.environment) != nil else {
            throw Refused(description: "app \(request.bundleId) does not accept \(request.environment), or Apple's API has no such environment")
        }
        guard !request.productIds.isEmpty, Set(request.productIds).count == request.productIds.count else {
            throw Refused(description: "name each product once (--product)")
        }
        if request.requestIdentifier != nil, request.productIds.count > 1 {
            throw Refused(description: "--request-id names one request: give one --product with it")
        }
        guard let reasonCode = AppStoreAPI.ExtendReasonCode(rawValue: request.extendReasonCode) else {
            throw Refused(description: "--reason \(request.extendReasonCode): Apple's extendReasonCode is 0 to 3")
        }
        // Every body checked before the first is sent: a typo in the third product refuses the whole run.
        let bodies = try request.productIds.map { product in
            do {
                return try AppStoreAPI.MassExtendRenewalDateRequest(
                    requestIdentifier: request.requestIdentifier ?? UUID().uuidString.lowercased(),
                    extendByDays: request.extendByDays,
                    extendReasonCode: reasonCode,
                    productId: product,
                    storefrontCountryCodes: request.storefrontCountryCodes
                )
            } catch let invalid as AppStoreAPI.InvalidRequest {
                throw Refused(description: invalid.description)
            }
        }
        let client = try AppStoreServerAPIClient(
            app: app,
            environment: request.environment,
            http: http,
            pacer: dependencies.applePacer,
            logger: logger
        )
        var outcomes: [Outcome] = []
        for body in bodies {
            outcomes.append(try await run(body, of: request, client: client, wait: wait, progress: progress))
        }
        return outcomes
    }

    private func run(
        _ body: AppStoreAPI.MassExtendRenewalDateRequest,
        of request: Request,
        client: AppStoreServerAPIClient,
        wait: Bool,
        progress: @Sendable (Progress) -> Void
    ) async throws -> Outcome {
        let database = dependencies.postgres
        var stored = try await MassExtensionStore.record(
            StoredMassExtension(
                bundleId: request.bundleId,
                environment: request.environment,
                requestIdentifier: body.requestIdentifier,
                productId: body.productId,
                extendByDays: body.extendByDays,
                extendReasonCode: body.extendReasonCode.rawValue,
                storefrontCountryCodes: body.storefrontCountryCodes,
                reason: request.reason,
                requestedAt: Date()
            ),
            actor: request.actor,
            database: database,
            logger: logger
        )
        guard stored.productId == body.productId, stored.extendByDays == body.extendByDays,
            stored.extendReasonCode == body.extendReasonCode.rawValue, stored.storefrontCountryCodes == body.storefrontCountryCodes
        else {
            throw Refused(
                description:
                    "request id \(body.requestIdentifier) was used for product \(stored.productId), \(stored.extendByDays) days, reason \(stored.extendReasonCode): run it again with those, or use another id"
            )
        }
        if stored.appleError != nil { return .refused(stored) }
        if stored.acceptedAt == nil {
            do {
                _ = try await client.extendRenewalDatesForAllActiveSubscribers(body)
                try await MassExtensionStore.answered(stored, refusal: nil, database: database, logger: logger)
                logger.notice(
                    "Apple accepted a renewal-date extension for all active subscribers of a product",
                    metadata: ["product": "\(body.productId)", "requestIdentifier": "\(body.requestIdentifier)", "days": "\(body.extendByDays)"]
                )
            } catch let error as AppStoreAPIError where error.status != nil && !error.isRetryable {
                try await MassExtensionStore.answered(stored, refusal: "\(error)", database: database, logger: logger)
                stored.appleError = "\(error)"
                return .refused(stored)
            }
        }
        guard wait else { return .accepted(stored) }
        let clock = ContinuousClock()
        let started = clock.now
        while true {
            let status = try await client.renewalExtensionStatus(productId: body.productId, requestIdentifier: body.requestIdentifier)
            let complete = status.complete == true
            try await MassExtensionStore.checked(
                stored,
                completeDate: complete
                    ? Date(timeIntervalSince1970: Double(status.completeDate ?? Int64(Date().timeIntervalSince1970 * 1000)) / 1000) : nil,
                succeeded: status.succeededCount,
                failed: status.failedCount,
                database: database,
                logger: logger
            )
            stored =
                try await MassExtensionStore.find(
                    bundleId: stored.bundleId,
                    environment: stored.environment,
                    requestIdentifier: stored.requestIdentifier,
                    database: database,
                    logger: logger
                ) ?? stored
            let elapsed = clock.now - started
            progress(
                Progress(request: stored, elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, done: complete)
            )
            if complete { return .complete(stored) }
            try await Task.sleep(for: pollEvery)
        }
    }
}
