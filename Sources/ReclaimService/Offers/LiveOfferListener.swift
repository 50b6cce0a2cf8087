import Foundation
import Logging
import Metrics
import PostgresNIO
import ReclaimStore
import ServiceLifecycle
import Synchronization

/// Keeps a ``LiveOfferIndex`` in sync (API role): LISTEN for offers inserted, then load the live ones, then ping
/// itself through the same channel to confirm how current the index is; rebuild it now and then so that offers
/// that ended stop sending launches to the database. Reconnects after a lost session, the index forgotten meanwhile.
struct LiveOfferListener: Service {
    /// How often the index confirms it is in sync; well inside ``LiveOfferIndex/staleness``.
    static let pingInterval: Duration = .milliseconds(200)
    /// How often the index is rebuilt from the live offers.
    static let rebuildInterval: Duration = .seconds(600)

    let index: LiveOfferIndex
    let postgres: Database
    let logger: Logger
    let instance = UUID().uuidString.lowercased()

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await cancelWhenGracefulShutdown { try await listen() }
            } catch {
                if Task.isCancelledOrShuttingDown { break }
                logger.warning(
                    "live-offer index lost its LISTEN session; launches ask the database",
                    metadata: ["error": "\(String(reflecting: error))"]
                )
            }
            index.forget()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
        index.forget()
    }

    private func listen() async throws {
        let sent = SentPings()
        try await postgres.withConnection(deadline: nil, logger: logger) { connection in
            try await connection.listen(on: OfferStore.liveOffersChannel) { notifications in
                // Listening from here on (notifications wait in the sequence meanwhile): whatever commits after the
                // load's snapshot will be notified.
                try await rebuildNow()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var sequence = 0
                        while !Task.isCancelled {
                            sequence += 1
                            sent.record(sequence)
                            // A ping that fails is only a missed confirmation: the index goes stale, launches ask the
                            // database, and the next ping that comes back puts it in sync again.
                            _ = try? await postgres.query(
                                "SELECT pg_notify(\(OfferStore.liveOffersChannel), \("s \(instance) \(sequence)"))",
                                logger: logger
                            )
                            try await Task.sleep(for: Self.pingInterval)
                        }
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try await Task.sleep(for: Self.rebuildInterval)
                            do {
                                try await rebuildNow()
                            } catch {
                                logger.warning(
                                    "could not rebuild the live-offer index; keeping it",
                                    metadata: ["error": "\(String(reflecting: error))"]
                                )
                            }
                        }
                    }
                    for try await notification in notifications {
                        let payload = notification.payload
                        if payload.hasPrefix("o "), let key = OfferStore.liveOfferKey(payload) {
                            index.insert(LiveOfferIndex.key(bundleId: key.bundleId, appAccountToken: key.appAccountToken))
                        } else if payload.hasPrefix("s \(instance) "), let sequence = Int(payload.split(separator: " ").last ?? ""),
                            let at = sent.take(sequence)
                        {
                            index.synced(upTo: at)
                        }
                    }
                    group.cancelAll()
                }
            }
        }
    }

    private func rebuildNow() async throws {
        index.beginRebuild()
        var members = Set<UInt64>()
        let owners = try await postgres.withConnection(logger: logger) { try await OfferStore.liveOfferOwners(connection: $0, logger: logger) }
        for (bundleId, token) in owners {
            members.insert(LiveOfferIndex.key(bundleId: bundleId, appAccountToken: token))
        }
        index.load(members)
        logger.debug("live-offer index loaded", metadata: ["members": "\(members.count)"])
    }

    /// When each ping was sent, until it comes back.
    final class SentPings: Sendable {
        private let sent = Mutex<[Int: ContinuousClock.Instant]>([:])
        func record(_ sequence: Int) { sent.withLock { $0[sequence] = .now } }
        func take(_ sequence: Int) -> ContinuousClock.Instant? {
            sent.withLock { sent in
                let at = sent.removeValue(forKey: sequence)
                sent = sent.filter { $0.key > sequence }  // older pings were lost with an earlier session
                return at
            }
        }
    }
}
