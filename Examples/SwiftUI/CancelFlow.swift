// A settings screen's "Cancel subscription" flow in SwiftUI: a short survey the subscriber can skip, Reclaim's answer
// (an offer, a message or a switch) to take or turn down, and Apple's sheet one tap away at every step. docs/ios.md
// shows this file; scripts/check-client type-checks it against ReclaimClient and Apple's declarations
// (Tests/StoreKitInterface), as for iOS and as for visionOS. Copy it into your app and adapt the texts.

import Foundation
import Observation
import ReclaimClient
import StoreKit
import SwiftUI

/// One row of the flow: a survey answer, the answer's action, or the way on to Apple.
struct CancelChoice: Identifiable, Sendable {
    enum Action: Sendable {
        case reason(String)
        case skip
        case accept
        case decline
        case apple
    }

    let id: String
    let title: String
    let action: Action
}

/// Drives Reclaim's cancel flow for the subscription `product` belongs to.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
@MainActor
@Observable
final class CancelSubscriptionModel {
    /// The survey: your copy of the app's `cancelReasons` in Reclaim's configuration, in your words. `refund` leads to
    /// Apple's refund request sheet.
    static let reasons = [
        ("too_expensive", "It costs too much"), ("not_using", "I don't use it enough"),
        ("missing_features", "It's missing something I need"), ("refund", "I want a refund"), ("other", "Something else"),
    ]
    /// Your words for the `message:` keys of your cancel-flow campaigns. A key not here is not shown.
    static let messages = ["PAUSE_INSTEAD": "Taking a break? Your data stays here whenever you come back."]

    let product: Product
    private let reclaim: ReclaimClient
    private let flow: CancelFlow
    private var openURL: OpenURLAction?
    private(set) var headline = "Why are you cancelling?"
    private(set) var detail = "Your answer helps us improve. You can skip it."
    private(set) var choices: [CancelChoice]
    /// Apple's sheets, which SwiftUI presents.
    var showsManageSheet = false
    var showsRefundSheet = false
    /// The subscription's latest transaction, for Apple's refund request sheet (0: none found).
    private(set) var refundTransactionID: UInt64 = 0

    /// `appAccountToken`: your signed-in user's, if your purchases carry one; nil otherwise.
    init(product: Product, reclaim: ReclaimClient, appAccountToken: UUID?) {
        self.product = product
        self.reclaim = reclaim
        weak var model: CancelSubscriptionModel?  // weak: the model holds the flow, and the flow these closures
        flow = reclaim.cancelFlow(for: appAccountToken.map(CancelFlow.Subscriber.appAccountToken)) { sheet in
            guard let model else { throw CancelFlow.SheetUnavailable() }
            try model.present(sheet)
        } fallback: { url in
            model?.openURL?(url)
        }
        choices = Self.reasons.map { CancelChoice(id: $0.0, title: $0.1, action: .reason($0.0)) }
            + [CancelChoice(id: "skip", title: "Skip", action: .skip), Self.apple]
        model = self
    }

    static let apple = CancelChoice(id: "apple", title: "Manage subscription in the App Store", action: .apple)

    /// Call when the screen appears: finds the subscription's latest transaction, for the refund request sheet and,
    /// without an appAccountToken, to tell Reclaim whose subscription it is.
    func prepare(openURL: OpenURLAction) async {
        self.openURL = openURL
        guard let group = product.subscription?.subscriptionGroupID,
            let status = try? await Product.SubscriptionInfo.status(for: group).first
        else { return }
        if flow.subscriber == nil { flow.subscriber = .signedTransaction(status.transaction.jwsRepresentation) }
        if case .verified(let transaction) = status.transaction { refundTransactionID = transaction.id }
    }

    /// Call from a row, with the view's `PurchaseAction`.
    func choose(_ choice: CancelChoice, using purchase: PurchaseAction) async {
        switch choice.action {
        case .reason(let reason): await show(flow.start(reason: reason))
        case .skip: await flow.skip()
        case .accept: await accept(using: purchase)
        case .decline: await flow.decline()
        case .apple: await flow.open()
        }
    }

    /// Reclaim's answer, or, with nothing to show, straight on to Apple's sheet.
    private func show(_ answer: CancelFlow.Answer) async {
        switch answer.content {
        case .offer(let offer):
            // The App Store's terms for it (Examples/OfferTerms.swift); an offer StoreKit does not list is not shown.
            if offer.productIdentifier == product.id, let listed = await reclaim.storeKitOffer(for: offer, of: product) {
                ask("Stay for \(listed.displayPrice)", detail: offerTerms(listed, for: product), accept: "Stay with this offer")
                return
            }
        case .message(let key):
            if let text = Self.messages[key] {
                ask(text, detail: "", accept: "Keep my subscription")
                return
            }
        case .switchTo(let productIdentifier):
            if let other = try? await Product.products(for: [productIdentifier]).first {
                ask("\(other.displayName) for \(other.displayPrice)?", detail: "Switch instead of cancelling.", accept: "Switch")
                return
            }
        case .nothing:
            break
        }
        await flow.decline()  // nothing this app can show: on to Apple's sheet
    }

    private func ask(_ question: String, detail: String, accept: String) {
        headline = question
        self.detail = detail
        choices = [
            CancelChoice(id: "accept", title: accept, action: .accept),
            CancelChoice(id: "decline", title: "No thanks, continue to cancel", action: .decline),
        ]
    }

    /// Takes the answer; a purchase that fails leaves the answer and the way to Apple on screen.
    private func accept(using purchase: PurchaseAction) async {
        let result: Product.PurchaseResult?
        do {
            switch flow.answer?.content {
            case .offer?:
                // Checks the product, fetches a stale offer again, reports the offer's events and the flow's.
                result = try await flow.acceptOffer(product) { try await purchase(product, options: $0) }
            case .switchTo(let productIdentifier)?:
                guard let other = try await Product.products(for: [productIdentifier]).first else {
                    await flow.decline()
                    return
                }
                result = try await flow.acceptSwitch(to: other) { try await purchase(other, options: $0) }
            default:
                flow.accept()  // a message: the subscriber stays
                result = nil
            }
        } catch {
            detail = "The purchase did not go through: \(error.localizedDescription)"
            return
        }
        guard let result else {
            done("Thanks for staying.")
            return
        }
        switch result {
        case .success(.verified(let transaction)):
            await transaction.finish()  // unlock what the transaction grants; Reclaim learns of it from Apple
            done("Thanks for staying.")
        case .pending:
            done("Waiting for approval.")
        case .success(.unverified), .userCancelled:
            break  // the answer stays, and so does the way on to Apple's sheet
        @unknown default:
            break
        }
    }

    private func done(_ text: String) {
        headline = text
        detail = ""
        choices = [Self.apple]
    }

    /// Apple's sheet where SwiftUI declares it: manage subscriptions on iOS, iPadOS, Mac Catalyst and visionOS, the
    /// refund request there and on macOS 14. Elsewhere the flow opens Apple's subscriptions page.
    private func present(_ sheet: CancelFlow.Sheet) throws {
        switch sheet {
        case .manageSubscriptions:
            #if os(macOS) || os(tvOS) || os(watchOS)
            throw CancelFlow.SheetUnavailable()
            #else
            showsManageSheet = true
            #endif
        case .refundRequest:
            #if os(tvOS) || os(watchOS)
            throw CancelFlow.SheetUnavailable()
            #else
            guard refundTransactionID != 0 else { throw CancelFlow.SheetUnavailable() }
            showsRefundSheet = true
            #endif
        }
    }

    /// A refund request that could not be made: the manage-subscriptions sheet instead, where the subscriber can
    /// still cancel.
    func refundSheetClosed(_ result: Result<Transaction.RefundRequestStatus, Transaction.RefundRequestError>) async {
        if case .failure = result { await flow.open(.manageSubscriptions) }
    }
}

/// The screen: the question or the answer, its rows, and Apple's sheets.
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, *)
struct CancelSubscriptionView: View {
    @Bindable var model: CancelSubscriptionModel
    @Environment(\.purchase) private var purchase
    @Environment(\.openURL) private var openURL

    var body: some View {
        VStack {
            Text(model.headline)
            Text(model.detail)
            List(model.choices) { choice in
                Button(choice.title) {
                    Task { await model.choose(choice, using: purchase) }
                }
            }
        }
        .task { await model.prepare(openURL: openURL) }
        #if !os(macOS) && !os(tvOS) && !os(watchOS)
        .manageSubscriptionsSheet(isPresented: $model.showsManageSheet)
        #endif
        #if !os(tvOS) && !os(watchOS)
        .refundRequestSheet(for: model.refundTransactionID, isPresented: $model.showsRefundSheet) { result in
            Task { await model.refundSheetClosed(result) }
        }
        #endif
    }
}
