import Foundation

/// When Reclaim sets a subscription's `appAccountToken` through Apple's Set App Account Token (opt-in per app,
/// `apps[].setAppAccountToken`): the purchase carries none, or another, while Reclaim knows whose it is.
///
/// Apple's rules, applied before asking: the call takes an original transaction id ("The original transaction
/// identifier of the transaction"; `TransactionIdIsNotOriginalTransactionIdError` otherwise), and "you can't set an
/// app account token for a transaction that's in the family-sharing state" (`FamilyTransactionNotSupportedError`):
/// only a purchase whose `inAppOwnershipType` is PURCHASED is set. The token then applies to the transaction "and all
/// subsequent renewals".
public enum AppAccountTokenRepair {
    /// `apps[].setAppAccountToken`.
    public enum Mode: String, Sendable, CaseIterable {
        /// Never call Apple (the default).
        case off
        /// Only where Apple's transaction carries no token.
        case fill
        /// Also replace a token Apple holds when the app's user proved the purchase (the lookup with a user token).
        case correct
    }

    /// How Reclaim knows the token.
    public enum Source: String, Sendable {
        /// An earlier transaction of the same subscription carried it (the app set it when the customer bought there).
        case earlierTransaction = "earlier-transaction"
        /// `POST /v1/offers/lookup` proved the purchase with Apple's signed transaction while the team's backend's
        /// user token proved the app user.
        case lookup
    }

    /// The token to set on the subscription of `transaction`, and the one it replaces; nil when nothing is to be set.
    ///
    /// An earlier transaction's token never replaces one Apple holds: the newer purchase's token was set by the app
    /// at that purchase and is the better witness. Only the lookup's proven user does, and only in `correct` mode.
    public static func update(
        known: UUID?,
        transaction: TransactionInfo?,
        source: Source,
        mode: Mode
    ) -> (token: UUID, replaces: UUID?)? {
        guard mode != .off, let known, let transaction, transaction.inAppOwnershipType == "PURCHASED" else { return nil }
        guard let original = transaction.originalTransactionId, !original.isEmpty else { return nil }
        let held = transaction.appAccountToken.flatMap { UUID(uuidString: $0) }
        if held == known { return nil }
        if held != nil, !(mode == .correct && source == .lookup) { return nil }
        return (known, held)
    }
}
