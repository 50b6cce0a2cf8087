import Foundation
import Synchronization

/// Which app users have a live offer, held in memory by each API process so that `GET /v1/offers` answers "none"
/// (most launches) without a database round trip.
///
/// Members are 64-bit fingerprints of (bundle id, appAccountToken): a fingerprint shared by chance, or left by an
/// offer that has since ended, only sends that launch to the database, which has the last word. An absent
/// fingerprint is "none" only while the index is in sync: ``LiveOfferListener`` loads the live offers after it
/// starts listening for new ones (a trigger NOTIFYs every offer inserted with a token), and every
/// ``LiveOfferListener/pingInterval`` it sends itself a NOTIFY: PostgreSQL delivers notifications in commit
/// order, so receiving its own ping means every offer committed before the ping was sent is in the index. An
/// empty answer therefore misses no offer committed more than ``staleness`` before it; past that (a stalled or
/// lost LISTEN session) every launch goes to the database until the index is in sync again.
final class LiveOfferIndex: Sendable {
    /// How old the index's last confirmed sync may be for an absent member to mean "none".
    static let staleness: Duration = .seconds(1)

    private struct State {
        /// nil until loaded, and after the LISTEN session is lost.
        var members: Set<UInt64>?
        /// Fingerprints inserted while a rebuild's query runs, added to its result.
        var rebuilding: Set<UInt64>?
        /// The newest moment up to which every committed offer is known to be in `members`.
        var syncedUpTo: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// The fingerprint of one app user: FNV-1a over the bundle id's bytes, a separator and the token's 16 bytes.
    static func key(bundleId: String, appAccountToken: UUID) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        for byte in bundleId.utf8 { mix(byte) }
        mix(0)
        withUnsafeBytes(of: appAccountToken.uuid) { for byte in $0 { mix(byte) } }
        return hash
    }

    /// false: no live offer (as of at most ``staleness`` ago); true: maybe one; nil: not known, ask the database.
    func mayHaveOffer(bundleId: String, appAccountToken: UUID, now: ContinuousClock.Instant = .now) -> Bool? {
        let key = Self.key(bundleId: bundleId, appAccountToken: appAccountToken)
        return state.withLock { state in
            guard let members = state.members, let synced = state.syncedUpTo, now - synced < Self.staleness else { return nil }
            return members.contains(key)
        }
    }

    /// A new live offer (from its NOTIFY).
    func insert(_ key: UInt64) {
        state.withLock { state in
            state.members?.insert(key)
            state.rebuilding?.insert(key)
        }
    }

    /// The live offers as a query read them, after LISTEN started: the index is whole from now on, but not yet
    /// known to be in sync (the first ping says so).
    func load(_ members: Set<UInt64>) {
        state.withLock { state in
            state.members = members.union(state.rebuilding ?? [])
            state.rebuilding = nil
        }
    }

    /// Before a rebuild's query: inserts from now on are kept for its result too.
    func beginRebuild() {
        state.withLock { $0.rebuilding = [] }
    }

    /// Every offer committed before `instant` is in the index.
    func synced(upTo instant: ContinuousClock.Instant) {
        state.withLock { state in
            if state.members != nil, instant > (state.syncedUpTo ?? instant - .seconds(1)) { state.syncedUpTo = instant }
        }
    }

    /// The LISTEN session ended: notifications may be missed, so nothing is known until the next load.
    func forget() {
        state.withLock { $0 = State() }
    }

    var count: Int? { state.withLock { $0.members?.count } }
}
