import Foundation

extension CancelFlow {
    /// What Reclaim answered the cancel intent (`POST /v1/cancel-flow`), or, when it did not, nothing to show.
    public struct Answer: Sendable, Equatable {
        /// What to show the subscriber.
        public enum Content: Sendable, Equatable {
            /// A promotional offer, signed for the subscriber: buy it as any ``PendingOffer``
            /// (``CancelFlow/acceptOffer(buy:purchase:)``). Show its terms as the App Store gives them.
            case offer(PendingOffer)
            /// Your app's own message, by the key a campaign names (`message:`): word it yourself.
            case message(String)
            /// A suggestion to move to this product instead (`switchTo:`).
            case switchTo(productIdentifier: String)
            /// Nothing: go on to Apple's sheet (``CancelFlow/open(_:)``).
            case nothing
        }

        /// The flow's id on the server; nil when no flow started there (no subscriber, Reclaim unreachable, late, or
        /// an answer this client could not read).
        public let flowId: UUID?
        /// The subscription Reclaim found, when it found one.
        public let originalTransactionId: String?
        /// The survey answer, as sent; nil for no answer.
        public let reason: String?
        public let content: Content
        /// The campaign that decided; nil when none did.
        public let campaign: String?
        /// The campaign's arm; nil when it has no variants.
        public let variant: String?
        /// Apple's sheet for the subscriber who goes on cancelling.
        public let next: CancelFlow.Sheet

        /// Nothing to show, for a flow Reclaim did not answer: Apple's sheet next, the refund request sheet for the
        /// survey answer ``CancelFlow/refundReason`` (as the server would answer).
        static func nothing(reason: String?) -> Answer {
            Answer(
                flowId: nil,
                originalTransactionId: nil,
                reason: reason,
                content: .nothing,
                campaign: nil,
                variant: nil,
                next: reason == CancelFlow.refundReason ? .refundRequest : .manageSubscriptions
            )
        }
    }

    /// The body of `POST /v1/cancel-flow`.
    struct StartBody: Encodable {
        let appAccountToken: String?
        let signedTransaction: String?
        /// Absent for no answer.
        let reason: String?
        let canShow: [String]

        init(subscriber: Subscriber, reason: String?, canShow: Set<AnswerKind>) {
            switch subscriber {
            case .appAccountToken(let token):
                appAccountToken = token.uuidString.lowercased()
                signedTransaction = nil
            case .signedTransaction(let transaction):
                appAccountToken = nil
                signedTransaction = transaction
            }
            self.reason = reason
            self.canShow = AnswerKind.allCases.filter(canShow.contains).map(\.rawValue)
        }
    }

    /// The answer of `POST /v1/cancel-flow`, read leniently: a kind, a sheet or an offer this client cannot read is
    /// nothing to show, never a failed flow.
    struct StartAnswer: Decodable {
        struct Body: Decodable {
            let kind: String
            let campaign: String?
            let variant: String?
            let message: String?
            let productIdentifier: String?
            let offer: PendingOffer?

            enum CodingKeys: String, CodingKey {
                case kind, campaign, variant, message, productIdentifier, offer
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kind = try container.decode(String.self, forKey: .kind)
                campaign = try container.decodeIfPresent(String.self, forKey: .campaign)
                variant = try container.decodeIfPresent(String.self, forKey: .variant)
                message = try container.decodeIfPresent(String.self, forKey: .message)
                productIdentifier = try container.decodeIfPresent(String.self, forKey: .productIdentifier)
                offer = try? container.decodeIfPresent(PendingOffer.self, forKey: .offer)
            }
        }

        let flowId: UUID
        let originalTransactionId: String?
        let reason: String?
        let answer: Body
        let next: String?

        /// The answer for the app: only what it said it can show; an offer that can be fetched again the way the flow
        /// found the subscriber (it is the subscriber's live offer, `GET /v1/offers` delivers it too).
        func answer(canShow: Set<AnswerKind>, subscriber: Subscriber, reason sent: String?) -> Answer {
            var content = Answer.Content.nothing
            switch answer.kind {
            case AnswerKind.offer.rawValue where canShow.contains(.offer):
                if var offer = answer.offer {
                    switch subscriber {
                    case .appAccountToken(let token): offer.lookup = .appAccountToken(token)
                    case .signedTransaction(let transaction): offer.lookup = .signedTransaction(transaction)
                    }
                    content = .offer(offer)
                }
            case AnswerKind.message.rawValue where canShow.contains(.message):
                if let key = answer.message, !key.isEmpty { content = .message(key) }
            case AnswerKind.switchTo.rawValue where canShow.contains(.switchTo):
                if let product = answer.productIdentifier, !product.isEmpty { content = .switchTo(productIdentifier: product) }
            default:
                break
            }
            let fallback = Answer.nothing(reason: sent).next
            return Answer(
                flowId: flowId,
                originalTransactionId: originalTransactionId,
                reason: sent,
                content: content,
                campaign: answer.campaign,
                variant: answer.variant,
                next: next.flatMap(CancelFlow.Sheet.init(rawValue:)) ?? fallback
            )
        }
    }
}
