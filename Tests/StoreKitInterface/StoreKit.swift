// A stand-in for Apple's StoreKit with exactly the symbols ReclaimClient's glue (PendingOffer+StoreKit.swift,
// PendingOfferCode+StoreKit.swift, CancelFlow+StoreKit.swift) and the app code checked beside it (AppUsage.swift,
// Examples/SwiftUI) use, so that they type-check on Linux (scripts/check-client), where `#if canImport(StoreKit)`
// otherwise hides the glue.
//
// Each declaration is transcribed from Apple's documentation (developer.apple.com/documentation/storekit, read
// 2026-11-25 and 2026-12, the iOS 26 SDK; the cancel flow's, 2027-01); Apple's declaration and availability are
// quoted above it. Only the shape
// matters: the bodies never run. Do not add a symbol from memory: transcribe it, with its quote, or the check proves
// nothing.
//
// Availability: a Linux compiler checks no Apple platform's availability, so `@available(iOS 15.0, …)` written here
// would prove nothing. The one difference between platforms the glue must respect is transcribed as a compile
// condition instead: built with `-D RECLAIM_CHECK_VISIONOS`, this module is StoreKit as visionOS declares it, where
// `purchase(options:)` is unavailable. What stays unchecked: every other availability (an API newer than a deployment
// target), and that these quotes match the SDK an app builds with.

import Foundation
import UIKit

// Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `struct Product`
public struct Product: Sendable {
    // Apple: `let id: String` (Product, iOS 15.0+)
    public let id: String

    // Apple (iOS 15.0+, visionOS 1.0+): `let displayName: String`, "The localized display name of the product".
    public let displayName: String

    // Apple (iOS 15.0+, visionOS 1.0+): `let displayPrice: String`, "The localized string representation of the
    // product price, suitable for display".
    public let displayPrice: String

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `let subscription:
    // Product.SubscriptionInfo?`, "A nil value indicates that this product isn't an auto-renewable subscription".
    public let subscription: SubscriptionInfo?

    // Apple (iOS 15.0+, iPadOS 15.0+, macOS 12.0+, tvOS 15.0+, visionOS 1.0+, watchOS 8.0+): `static func
    // products<Identifiers>(for identifiers: Identifiers) async throws -> [Product] where Identifiers : Collection,
    // Identifiers.Element == String`, "Requests product data from the App Store"; "StoreKit ignores any duplicate
    // identifiers in the collection." (developer.apple.com/documentation/storekit/product/products(for:))
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
    where Identifiers: Collection, Identifiers.Element == String { stub() }

    public struct PurchaseOption: Hashable, Sendable {
        // Apple: `static func appAccountToken(_ token: UUID) -> Product.PurchaseOption` (iOS 15.0+)
        public static func appAccountToken(_ token: UUID) -> Product.PurchaseOption { stub() }

        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+):
        // `@backDeployed(before: iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0)
        //  static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption]`
        // An array, not one option: the caller adds every element to the purchase's options.
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption] { stub() }

        // Apple (iOS 15.0–26.0, deprecated since): `static func promotionalOffer(offerID: String, keyID: String,
        //  nonce: UUID, signature: Data, timestamp: Int) -> Product.PurchaseOption`
        @available(*, deprecated, message: "Apple: iOS 15.0–26.0; use promotionalOffer(_:compactJWS:)")
        public static func promotionalOffer(
            offerID: String,
            keyID: String,
            nonce: UUID,
            signature: Data,
            timestamp: Int
        )
            -> Product.PurchaseOption
        { stub() }
    }

    // Apple: `enum PurchaseResult`; "When successful, the associated value contains a VerificationResult of the
    // transaction"; `case userCancelled`; `case pending`.
    public enum PurchaseResult: Sendable {
        case success(VerificationResult<Transaction>)
        case userCancelled
        case pending
    }

    // Apple (iOS 15.0+, iPadOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+; no visionOS):
    // `@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
    // On visionOS the compiler says: "'purchase(options:)' is unavailable in visionOS: Use @Environment(\.purchase) to
    // get a PurchaseAction value to call. If your app uses UIKit, use purchase(confirmIn:options:)."
    #if RECLAIM_CHECK_VISIONOS
    @available(
        *,
        unavailable,
        message:
            "unavailable in visionOS: Use @Environment(\\.purchase) to get a PurchaseAction value to call. If your app uses UIKit, use purchase(confirmIn:options:)."
    )
    @MainActor
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult { stub() }
    #else
    @MainActor
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult { stub() }
    #endif

    // Apple (iOS 17.0+, iPadOS 17.0+, Mac Catalyst 17.0+, tvOS 17.0+, visionOS 1.0+; not macOS, not watchOS):
    // `@MainActor func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws ->
    // Product.PurchaseResult`, "Initiates a purchase for the product with the App Store and displays the confirmation
    // sheet"; Apple: "Use purchase(confirmIn:options:) for apps that use UIKit."
    @MainActor
    public func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        stub()
    }

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `struct SubscriptionInfo`
    public struct SubscriptionInfo: Sendable {
        // Apple (iOS 15.0+, visionOS 1.0+): `let subscriptionGroupID: String`, "The subscription group identifier for
        // this subscription".
        public let subscriptionGroupID: String

        // Apple (iOS 15.0+, visionOS 1.0+): `let promotionalOffers: [Product.SubscriptionOffer]`, "This array is empty
        // if you haven't set up promotional offers in App Store Connect".
        public let promotionalOffers: [SubscriptionOffer]

        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `let subscriptionPeriod:
        // Product.SubscriptionPeriod`, "The duration of time between subscription renewals".
        public let subscriptionPeriod: SubscriptionPeriod

        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+):
        // `static func status(for groupID: String) async throws -> [Product.SubscriptionInfo.Status]`, "Gets the
        // subscription status for a subscription group identifier"; "This array is empty if the customer has never
        // subscribed to a product in this subscription group."
        public static func status(for groupID: String) async throws -> [Status] { stub() }

        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `struct Status`, "The renewal status
        // information for an auto-renewable subscription".
        public struct Status: Sendable {
            // Apple (iOS 15.0+, visionOS 1.0+): `let transaction: VerificationResult<Transaction>`, "The latest
            // transaction for the subscription group".
            public let transaction: VerificationResult<Transaction>
        }
    }

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `struct SubscriptionOffer`,
    // "Information about a subscription offer that you configure in App Store Connect".
    public struct SubscriptionOffer: Sendable {
        // Apple (iOS 15.0+, visionOS 1.0+): `let id: String?`, "The offer identifier"; nil for an introductory offer.
        public let id: String?

        // Apple (iOS 15.0+, visionOS 1.0+): `let displayPrice: String`, "The localized string representation of the
        // discounted price of the subscription offer".
        public let displayPrice: String

        // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `let period:
        // Product.SubscriptionPeriod`, "The subscription period for the subscription offer".
        public let period: SubscriptionPeriod

        // Apple (iOS 15.0+, …): `let periodCount: Int`; "If the payment mode is payAsYouGo, the period count represents
        // the number of periods the subscription renews at the discounted price. The period count is 1 for offers
        // with payment modes freeTrial and payUpFront."
        public let periodCount: Int

        // Apple (iOS 15.0+, …): `let paymentMode: Product.SubscriptionOffer.PaymentMode`, "The offer’s payment mode".
        public let paymentMode: PaymentMode

        // Apple (iOS 15.0+, …): `struct PaymentMode` (RawRepresentable, Equatable, Hashable, Sendable), "how a
        // subscription offer charges its discounted price — whether it charges one time, charges multiple times, or
        // charges nothing because it’s a free trial"; `static let freeTrial`, `static let payAsYouGo`,
        // `static let payUpFront: Product.SubscriptionOffer.PaymentMode`.
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "FreeTrial")
            public static let payAsYouGo = PaymentMode(rawValue: "PayAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "PayUpFront")
        }
    }

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `struct SubscriptionPeriod`, "Values
    // that represent the duration of time between subscription renewals"; `let value: Int`, "The number of period
    // units"; `let unit: Product.SubscriptionPeriod.Unit`.
    public struct SubscriptionPeriod: Hashable, Sendable {
        public let value: Int
        public let unit: Unit

        // Apple (iOS 15.0+, …): `enum Unit` with `case day`, `case week`, `case month`, `case year`. (Its
        // `localizedDescription` is not transcribed: Apple's page gives no availability we could read, and a
        // third-party listing says iOS 15.4, above the client's iOS 15.)
        public enum Unit: Hashable, Sendable {
            case day
            case week
            case month
            case year
        }
    }
}

public struct Transaction: Sendable {
    // Apple (iOS 15.0+, iPadOS 15.0+, macOS 12.0+, tvOS 15.0+, visionOS 1.0+, watchOS 8.0+): `let id: UInt64`, "The
    // unique identifier for the transaction"; "Every transaction such as an Apple In-App Purchase, restore, or
    // subscription renewal has a unique transaction identifier." (developer.apple.com/documentation/storekit/transaction/id)
    public let id: UInt64

    // `Transaction.ID`, which SwiftUI's `refundRequestSheet(for:isPresented:onDismiss:)` takes: no page of its own was
    // found; that modifier's symbol identifier (`…refundRequestSheet3for11isPresented9onDismissQrs6UInt64V…`) names the
    // parameter's type Swift's UInt64, the type of `id` above (the id of an Identifiable type).
    public typealias ID = UInt64

    // Apple: `let appAccountToken: UUID?` (iOS 15.0+), "A UUID that associates the transaction with a user on your own
    // service".
    public let appAccountToken: UUID?

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `let productID: String`, "The product
    // identifier of the in-app purchase".
    public let productID: String

    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `static var updates:
    // Transaction.Transactions { get }`, "The asynchronous sequence that emits a transaction when the system creates or
    // updates transactions that occur outside the app or on other devices"; "This sequence receives transactions that
    // occur outside of the app, such as Ask to Buy transactions, offer code redemptions, and purchases that customers
    // make in the App Store." And on `Product.PurchaseResult.pending`: "If a pending purchase succeeds, StoreKit
    // delivers the resulting Transaction in the transaction updates."
    public static var updates: Transactions { stub() }

    // Apple (iOS 15.0+, …): `struct Transactions` (AsyncSequence, Sendable), "An asynchronous sequence of
    // transactions", whose elements are `VerificationResult<Transaction>`.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>
        public struct AsyncIterator: AsyncIteratorProtocol {
            public mutating func next() async -> VerificationResult<Transaction>? { stub() }
        }
        public func makeAsyncIterator() -> AsyncIterator { stub() }
    }

    // Apple's example on Product.PurchaseResult: `await transaction.finish()`; declared `func finish() async`.
    public func finish() async {}

    // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, visionOS 1.0+; not macOS, tvOS, watchOS):
    // `@MainActor static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws ->
    // Transaction.RefundRequestStatus`, "Presents the refund request sheet for the specified transaction in a window
    // scene"; "Call this function from account settings or a help menu to enable customers to request a refund for an
    // in-app purchase within your app." (developer.apple.com/documentation/storekit/transaction/beginrefundrequest(for:in:)-65tph,
    // read through a public mirror of Apple's documentation: the documentation search has no copy of this page.) macOS
    // has `beginRefundRequest(for:in: NSViewController)` (macOS 12.0+), not used here.
    @MainActor
    public static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws -> RefundRequestStatus {
        stub()
    }

    // Apple (iOS 15.0+, iPadOS 15.0+, macOS 12.0+, tvOS 17.0+, visionOS 1.0+, watchOS 10.0+): `enum
    // RefundRequestStatus`, "The status codes for refund requests"; "The refund request status reflects the status of
    // the request, not the status of the refund itself." `case userCancelled`, "The user canceled submission of their
    // refund request"; `case success`, "The App Store has received the refund request."
    // (developer.apple.com/documentation/storekit/transaction/refundrequeststatus)
    public enum RefundRequestStatus: Sendable {
        case userCancelled
        case success
    }

    // Apple (iOS 15.0+, iPadOS 15.0+, macOS 12.0+, tvOS 17.0+, visionOS 1.0+, watchOS 10.0+): `enum
    // RefundRequestError`, "The error codes for refund requests", which the `beginRefundRequest` methods throw (an
    // Error). Its cases (`duplicateRequest`, `failed`, …) are not transcribed: nothing here reads them.
    // (developer.apple.com/documentation/storekit/transaction/refundrequesterror)
    public enum RefundRequestError: Error, Sendable {}
}

// Apple: `@frozen enum VerificationResult<SignedType>` with `case unverified(SignedType, VerificationResult<SignedType>.VerificationError)`
// and `case verified(SignedType)`.
public enum VerificationResult<SignedType: Sendable>: Sendable {
    // Apple: `enum VerificationError` (its cases are not used by the glue, so not transcribed).
    public enum VerificationError: Error, Sendable {}

    case unverified(SignedType, VerificationError)
    case verified(SignedType)
}

extension VerificationResult where SignedType == Transaction {
    // Apple (VerificationResult, where SignedType == Transaction, iOS 15.0+): `var jwsRepresentation: String { get }`
    // "the same as the JWSTransaction that the App Store Server API returns".
    public var jwsRepresentation: String { stub() }
}

// Apple (iOS 12.2–18.0, visionOS 1.0–2.0, deprecated since): `class SKPaymentDiscount` (an NSObject) with
// `init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber)`
open class SKPaymentDiscount: NSObject, @unchecked Sendable {
    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber) {}
}

// Apple (iOS 3.0–18.0, deprecated since; macOS 10.7–15.0): `class SKProduct`, "Information about a registered product
// in App Store Connect". Only the type is used. (Not marked Sendable: neither these three classes' pages say they are.)
open class SKProduct: NSObject {}

// Apple (iOS 3.0–18.0, visionOS 1.0–2.0, deprecated since): `class SKPayment`, whose `paymentWithProduct:` Swift imports
// as `convenience init(product: SKProduct)`; `class SKMutablePayment` (a subclass), "A mutable request to the App Store
// to process payment for additional functionality that your app offers", with `var applicationUsername: String?
// { get set }` (iOS 7.0–18.0) and `@NSCopying var paymentDiscount: SKPaymentDiscount? { get set }` (iOS 12.2–18.0).
open class SKPayment: NSObject {
    public convenience init(product: SKProduct) { self.init() }
}

open class SKMutablePayment: SKPayment {
    open var applicationUsername: String?
    open var paymentDiscount: SKPaymentDiscount?  // @NSCopying in Apple's declaration
}

// Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, macOS 12.0+, tvOS 15.0+, visionOS 1.0+, watchOS 8.0+):
// `enum AppStore`, "Properties and methods that represent the App Store, and request App Store actions." Only the members
// ReclaimClient's offer-code and cancel-flow glue call are transcribed.
public enum AppStore {
    // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, visionOS 1.0+; not macOS, tvOS, watchOS):
    // `@MainActor static func showManageSubscriptions(in scene: UIWindowScene) async throws`, "Presents the App Store
    // sheet for managing subscriptions"; "Use this function to display the manage subscriptions sheet within your app.
    // Consider adding a manage subscriptions option to your app."
    // (developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:)) macOS has
    // `showManageSubscriptions(from: NSWindow)` from macOS 27.3 only, not used here.
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene) async throws { let _: Void = stub() }

    // Apple (iOS 17.0+, iPadOS 17.0+, Mac Catalyst 17.0+, visionOS 1.0+): `@MainActor static func
    // showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws`, "Presents the App
    // Store sheet for managing subscriptions for a subscription group"; `subscriptionGroupID`: "The subscription group
    // identifier that the subscription belongs to."
    // (developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:subscriptiongroupid:))
    @MainActor public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws {
        let _: Void = stub()
    }

    // Apple (iOS 16.0–27.0, iPadOS 16.0–27.0, Mac Catalyst 16.0–27.0, visionOS 1.0–27.0):
    // `@MainActor static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws`, "Displays a sheet in
    // the window scene that enables customers to redeem an offer code that you configure in App Store Connect."
    // (macOS has `presentOfferCodeRedeemSheet(from: NSViewController)`, macOS 15.0–27.0; tvOS and watchOS have none.)
    @MainActor public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws { let _: Void = stub() }
}

private func stub<T>() -> T { fatalError("StoreKit interface stand-in: declarations only") }
