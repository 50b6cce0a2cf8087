import Crypto
import Foundation
import ReclaimStore
import Synchronization

/// Keys that authenticated recently, by the SHA-256 of the key, for `ttl`: an app's every launch presents the
/// same key, and looking it up in PostgreSQL each time was half of `GET /v1/offers`'s work. A revoked key keeps
/// working for at most `ttl` in a process that saw it. Only keys that authenticated are kept (unknown ones are
/// the failed-authentication limiter's business), at most `capacity` of them.
final class AuthenticatedKeyCache: Sendable {
    private struct Entry {
        let caller: APIKeyStore.Caller
        let expires: ContinuousClock.Instant
    }

    let ttl: Duration
    let capacity: Int
    private let entries = Mutex<[Data: Entry]>([:])

    init(ttl: Duration = .seconds(10), capacity: Int = 10_000) {
        self.ttl = ttl
        self.capacity = capacity
    }

    static func digest(_ key: String) -> Data { Data(SHA256.hash(data: Data(key.utf8))) }

    func caller(for digest: Data, now: ContinuousClock.Instant = .now) -> APIKeyStore.Caller? {
        entries.withLock { entries in
            guard let entry = entries[digest] else { return nil }
            guard entry.expires > now else {
                entries[digest] = nil
                return nil
            }
            return entry.caller
        }
    }

    func remember(_ caller: APIKeyStore.Caller, for digest: Data, now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= capacity { entries = entries.filter { $0.value.expires > now } }
            if entries.count >= capacity { entries.removeAll() }
            entries[digest] = Entry(caller: caller, expires: now + ttl)
        }
    }
}
