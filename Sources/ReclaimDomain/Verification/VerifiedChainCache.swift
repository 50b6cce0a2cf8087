import Crypto
import Foundation
import Synchronization

/// A bounded, thread-safe memory of certificate chains that already validated, so that the steady state costs
/// one ECDSA verification per JWS instead of a chain build (Apple signs a great many payloads with one leaf).
///
/// Two maps, both least-recently-used and both filled only after a JWS fully verified (so forgeries cannot
/// evict good entries):
/// - chains, keyed by the SHA-256 of the exact `x5c` bytes. Each entry keeps the chain's validity window, which
///   every payload's signedDate is checked against, so a cached chain never vouches for a payload signed outside it;
/// - headers, keyed by the exact header segment text, remembering its parsed form and chain key, so a known
///   header is neither base64-decoded, parsed nor hashed again.
/// Eviction scans linearly; it only happens when a new chain arrives in a full cache, which is rare.
final class VerifiedChainCache: Sendable {
    /// What a validated chain leaves behind: the leaf's key and when the whole chain is valid.
    struct Chain: Sendable {
        let leafKey: P256.Signing.PublicKey
        /// The latest `notValidBefore` of the chain's certificates.
        let notValidBefore: Date
        /// The earliest `notValidAfter` of the chain's certificates.
        let notValidAfter: Date
        /// SHA-256 of the trusted root's DER the chain ends in (``RootTrust/fingerprint(_:)``).
        let anchor: Data

        func isValid(at time: Date) -> Bool { time >= notValidBefore && time <= notValidAfter }
    }

    /// A header that was part of a verified JWS.
    struct Header: Sendable {
        let header: JWSHeader
        let chainKey: Data
    }

    private struct State {
        var chains: LeastRecentlyUsed<Chain>
        var headers: LeastRecentlyUsed<Header>
        var validations = 0
    }

    let capacity: Int
    private let state: Mutex<State>

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        state = Mutex(State(chains: LeastRecentlyUsed(capacity: max(0, capacity)), headers: LeastRecentlyUsed(capacity: max(0, capacity))))
    }

    /// The key of a chain: SHA-256 over each certificate's length and bytes, so no two lists of certificates collide.
    static func key(for certificates: [Data]) -> Data {
        var hasher = SHA256()
        for der in certificates {
            withUnsafeBytes(of: UInt64(der.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: der)
        }
        return Data(hasher.finalize())
    }

    /// The cached chain for `key`, if there is one; the caller checks the payload's time against its window.
    func chain(_ key: Data) -> Chain? {
        state.withLock { $0.chains[key] }
    }

    /// The parsed form of a header segment that verified before.
    func header(_ segment: Data) -> Header? {
        state.withLock { $0.headers[segment] }
    }

    /// Remembers a JWS that verified: its header, and its chain if that was just validated.
    func remember(header: Header, segment: Data, chain: Chain?) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if let chain { state.chains[header.chainKey] = chain }
            // A copy, so the cache does not keep alive the signing input the segment may be a slice of.
            state.headers[Data(segment)] = header
        }
    }

    /// Counts one full chain validation (for tests and metrics).
    func recordValidation() {
        state.withLock { $0.validations += 1 }
    }

    var count: Int { state.withLock { $0.chains.count } }

    var validationCount: Int { state.withLock { $0.validations } }
}

/// A dictionary bounded to `capacity` entries that forgets the least recently read or written one.
private struct LeastRecentlyUsed<Value> {
    private var slots: [Data: (value: Value, lastUse: UInt64)] = [:]
    private var tick: UInt64 = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { slots.count }

    subscript(key: Data) -> Value? {
        mutating get {
            // Through the index, so the key (a whole header for one of the maps) is hashed once.
            guard let index = slots.index(forKey: key) else { return nil }
            tick &+= 1
            slots.values[index].lastUse = tick
            return slots.values[index].value
        }
        set {
            guard let newValue else {
                slots[key] = nil
                return
            }
            if slots[key] == nil, slots.count >= capacity,
                let oldest = slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                slots[oldest] = nil
            }
            tick &+= 1
            slots[key] = (newValue, tick)
        }
    }
}
