// A stand-in for Apple's StoreKit with exactly the symbols ReclaimClient's glue (PendingOffer+StoreKit.swift) uses,
// so that the glue type-checks on Linux (scripts/check-client), where `#if canImport(StoreKit)` otherwise hides it.
//
// Each declaration is transcribed from Apple's documentation (developer.apple.com/documentation/storekit, read
// 2026-11-25, the iOS 26 SDK); Apple's declaration is quoted above it. Only the shape matters: the bodies never run.
// Do not add a symbol from memory: transcribe it, with its quote, or the check proves nothing.

import Foundation

public struct Product: Sendable {
    // Apple: `let id: String` (Product, iOS 15.0+)
    public let id: String

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

    // Apple: `@MainActor func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
    @MainActor
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult { stub() }
}

public struct Transaction: Sendable {
    // Apple: `let appAccountToken: UUID?` (iOS 15.0+)
    public let appAccountToken: UUID?

    // Apple's example on Product.PurchaseResult: `await transaction.finish()`; declared `func finish() async`.
    public func finish() async {}

    // Apple: `static func latest(for productID: String) async -> VerificationResult<Transaction>?` (iOS 15.0+)
    public static func latest(for productID: String) async -> VerificationResult<Transaction>? { stub() }
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

// Apple (iOS 12.2–18.0, deprecated since): `class SKPaymentDiscount` (an NSObject) with
// `init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber)`
open class SKPaymentDiscount: NSObject, @unchecked Sendable {
    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber) {}
}

private func stub<T>() -> T { fatalError("StoreKit interface stand-in: declarations only") }
