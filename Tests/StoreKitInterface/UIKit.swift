// A stand-in for the UIKit symbols StoreKit's scene purchase and sheets take (Tests/StoreKitInterface/StoreKit.swift,
// `purchase(confirmIn:options:)` and the window-scene sheets), transcribed from Apple's documentation
// (developer.apple.com/documentation/uikit, read 2026-12). Only the shape matters. Do not add a symbol from memory.

// Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.1+, tvOS 13.0+, visionOS 1.0+): `@MainActor class UIScene`, "An object
// that represents one instance of your app's user interface" (a UIResponder; not transcribed: not used).
@MainActor
open class UIScene {}

// Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.1+, tvOS 13.0+, visionOS 1.0+): `@MainActor class UIWindowScene`
// (a UIScene), "A scene that manages one or more windows for your app." Taken by StoreKit's offer-code sheet
// (`AppStore.presentOfferCodeRedeemSheet(in:)`) and by the cancel flow's sheets (`AppStore.showManageSubscriptions(in:)`,
// `Transaction.beginRefundRequest(for:in:)`).
@MainActor
open class UIWindowScene: UIScene {}
