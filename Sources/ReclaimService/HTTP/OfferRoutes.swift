import Foundation
import HTTPTypes
import Hummingbird
import ReclaimDomain
import ReclaimStore

/// The subscriber's deliverable offers, for the app key's app only, each with fresh signatures that no earlier
/// answer carried:
/// - `GET /v1/offers?appAccountToken=UUID`: an app user named by the token the app sets on its purchases;
/// - `POST /v1/offers/lookup` `{"signedTransaction": JWS}`: a subscription proven by a transaction Apple signed
///   (``TransactionProof``), for subscribers without an appAccountToken.
///
/// `Cache-Control: no-store`: every answer has new nonces and must not be replayed by a cache.
///
/// `?include=offerCodes` (either route) adds the subscriber's offer codes (``OfferCodeStore/deliver(to:connection:logger:)``)
/// to `offers`, each with `"kind": "offerCode"`. Opt-in: ReclaimClient 2.0 decodes `storeKit1` and `storeKit2` as
/// required in every element, so an element without them would fail its whole answer; it never sends `include`.
struct OfferRoutes {
    let delivery: OfferDelivery
    /// Apps that require a user token, by bundle id (for ``AppUserAuthenticator``).
    let userTokens: [String: UserTokenVerifier]
    let proof: TransactionProof
    /// Set App Account Token for a purchase the lookup proves while the app's user is proven too.
    var accountTokens: AccountTokenRepairs?

    /// A transaction JWS with its three-certificate chain is about 4 KiB.
    static let maxSignedTransactionBytes = 16 * 1024
    static let maxLookupBodyBytes = maxSignedTransactionBytes + 1024

    /// The answer's shape (see docs/http.md): the subscriber as asked about (appAccountToken for GET; the proven
    /// originalTransactionId, and the transaction's appAccountToken if it has one, for the lookup) and the offers.
    struct OffersResponse: Encodable {
        let appAccountToken: String?
        let originalTransactionId: String?
        let offers: [Element]
    }

    /// One element of `offers`: a signed promotional offer (as ReclaimClient 2.0 decodes it: no `kind`), or, for a
    /// client that asked, an offer code.
    enum Element: Encodable {
        case promotional(DeliveredOffer)
        case code(DeliveredCode)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .promotional(let offer): try offer.encode(to: encoder)
            case .code(let code): try code.encode(to: encoder)
            }
        }
    }

    /// An offer code for the app to open in Apple's redemption sheet, or by its redemption URL.
    struct DeliveredCode: Encodable {
        let kind = "offerCode"
        /// Its decision's id: the id the app records events with.
        let id: String
        let campaign: String
        let environment: String
        let productIdentifier: String
        /// The offer's reference name in App Store Connect.
        let offerIdentifier: String
        let offerCode: String
        let redemptionUrl: String
        let expiresAt: String

        init(_ code: OfferCodeStore.DeliveredCode) {
            id = code.id.uuidString.lowercased()
            campaign = code.campaignId
            environment = code.environment
            productIdentifier = code.productId
            offerIdentifier = code.offer
            offerCode = code.code
            redemptionUrl = code.redemptionURL
            expiresAt = code.expiresAt.formatted(.iso8601)
        }
    }

    /// Whether the request asks for offer codes: `include=offerCodes` (a comma-separated list; other values are
    /// ignored, for what a later client may ask of an earlier server).
    static func includesCodes(_ request: Request) -> Bool {
        request.uri.queryParameters.getAll("include").contains { $0.split(separator: ",").contains("offerCodes") }
    }

    struct DeliveredOffer: Encodable {
        struct StoreKit2: Encodable { let compactJWS: String }
        let id: String
        let campaign: String
        let environment: String
        let productIdentifier: String
        let offerIdentifier: String
        let storeKit1: StoreKit1OfferSignature
        let storeKit2: StoreKit2
        let expiresAt: String

        init(_ offer: StoredOffer) {
            self.init(
                id: offer.id,
                campaign: offer.campaignId,
                environment: offer.environment,
                productIdentifier: offer.productId,
                offerIdentifier: offer.offerIdentifier,
                storeKit1: offer.storeKit1,
                storeKit2JWS: offer.storeKit2JWS,
                expiresAt: offer.deliverableUntil
            )
        }

        /// An offer as it was just issued (the cancel flow's: ``CancelFlowService``).
        init(_ offer: NewOffer, environment: String) {
            self.init(
                id: offer.id,
                campaign: offer.campaignId,
                environment: environment,
                productIdentifier: offer.productId,
                offerIdentifier: offer.offerIdentifier,
                storeKit1: offer.signed.storeKit1,
                storeKit2JWS: offer.signed.storeKit2JWS,
                expiresAt: offer.deliverableUntil
            )
        }

        private init(
            id: UUID,
            campaign: String,
            environment: String,
            productIdentifier: String,
            offerIdentifier: String,
            storeKit1: StoreKit1OfferSignature,
            storeKit2JWS: String,
            expiresAt: Date
        ) {
            self.id = id.uuidString.lowercased()
            self.campaign = campaign
            self.environment = environment
            self.productIdentifier = productIdentifier
            self.offerIdentifier = offerIdentifier
            self.storeKit1 = storeKit1
            self.storeKit2 = StoreKit2(compactJWS: storeKit2JWS)
            self.expiresAt = expiresAt.formatted(.iso8601)
        }
    }

    /// The app user a lookup names (optional `appAccountToken` query parameter), proven by the user token the team's
    /// backend made for it: what lets Reclaim set that token on the purchase the transaction proves. Refused without
    /// a valid user token, and for an app that has none configured (anyone could then name any user).
    func provenUser(_ request: Request, bundleId: String) throws -> UUID? {
        guard let text = request.uri.queryParameters["appAccountToken"] else { return nil }
        guard let token = OfferRequestInput.uuid(String(text)) else {
            throw Problem(.invalidParameter, "appAccountToken must be a UUID such as 6f1d2c3b-0000-4000-8000-000000000051")
        }
        guard let verifier = userTokens[bundleId] else {
            throw Problem(
                .invalidParameter,
                "appAccountToken on the lookup names the app's user, and needs user tokens (the app's userTokenSecretFile): leave it out"
            )
        }
        try AppUserAuthenticator.requireUserToken(
            request,
            for: token,
            verifier: verifier,
            missing: "an appAccountToken on the lookup needs the X-Reclaim-User-Token the app's backend made for it"
        )
        return token
    }

    /// Registers on a group behind ``KeyAuthenticator`` `.app`; `GET /v1/offers` behind ``AppUserAuthenticator`` too.
    func register(on router: RouterGroup<ReclaimRequestContext>) {
        let appUsers = router.group().add(middleware: AppUserAuthenticator(userTokens: userTokens))
        appUsers.get("/v1/offers") { request, context -> JSONBody<OffersResponse> in
            let user = try context.appUser()
            let offers = try await delivery.deliver(
                to: .appUser(bundleId: user.bundleId, appAccountToken: user.appAccountToken),
                logger: context.logger
            )
            let codes =
                Self.includesCodes(request)
                ? try await delivery.deliverCodes(
                    to: .appUser(bundleId: user.bundleId, appAccountToken: user.appAccountToken),
                    logger: context.logger
                )
                : []
            return JSONBody(
                OffersResponse(
                    appAccountToken: user.appAccountToken.uuidString.lowercased(),
                    originalTransactionId: nil,
                    offers: offers.map { .promotional(DeliveredOffer($0)) } + codes.map { .code(DeliveredCode($0)) }
                ),
                headers: [.cacheControl: "no-store"]
            )
        }

        // A user token is not asked for here: the transaction Apple signed is the stronger proof (see TransactionProof).
        router.post("/v1/offers/lookup") { request, context -> JSONBody<OffersResponse> in
            let bundleId = try context.appBundleId()
            let body = try await readJSONBody(request, context: context, limit: Self.maxLookupBodyBytes, record: { _ in })
            let signedTransaction: String
            do throws(InvalidInput) {
                signedTransaction = try OfferRequestInput.signedTransaction(body: Data(body.readableBytesView), limit: Self.maxSignedTransactionBytes)
            } catch {
                throw Problem(.invalidBody, error.reason)
            }
            let user = try provenUser(request, bundleId: bundleId)
            let proven: (subscriber: SubscriberKey, appAccountToken: UUID?, transaction: TransactionInfo)
            do throws(TransactionProof.Refused) {
                proven = try await proof.subscriber(of: signedTransaction, bundleId: bundleId)
            } catch {
                throw Problem(error)
            }
            if let user {
                try await accountTokens?.proven(proven.transaction, of: proven.subscriber, user: user, logger: context.logger)
            }
            let offers = try await delivery.deliver(to: .subscription(proven.subscriber), logger: context.logger)
            let codes =
                Self.includesCodes(request) ? try await delivery.deliverCodes(to: .subscription(proven.subscriber), logger: context.logger) : []
            return JSONBody(
                OffersResponse(
                    appAccountToken: proven.appAccountToken?.uuidString.lowercased(),
                    originalTransactionId: proven.subscriber.originalTransactionId,
                    offers: offers.map { .promotional(DeliveredOffer($0)) } + codes.map { .code(DeliveredCode($0)) }
                ),
                headers: [.cacheControl: "no-store"]
            )
        }
    }
}
