import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// systemd's watchdog (`WatchdogSec=` in the unit, see `sd_notify(3)`): while ``Liveness`` reports no stall, sends
/// `WATCHDOG=1` to `$NOTIFY_SOCKET` twice per `$WATCHDOG_USEC`; once a worker lane or an ingest transaction is
/// stuck it stops, and systemd kills and restarts the process (`Restart=on-failure`). This is what `/healthz` is to
/// Kubernetes. Without those variables (not under systemd, or no `WatchdogSec=`) it does nothing.
struct SystemdWatchdog: Service {
    let liveness: Liveness
    let logger: Logger
    var environment: [String: String] = ProcessInfo.processInfo.environment

    func run() async throws {
        guard let socketPath = environment["NOTIFY_SOCKET"], !socketPath.isEmpty,
            let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0,
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        else {
            try? await gracefulShutdown()  // returning early would end the service group
            return
        }
        let interval = Duration.microseconds(Int64(clamping: usec / 2))
        logger.info("systemd watchdog on", metadata: ["interval": "\(interval)"])
        var withheld = false
        while !Task.isCancelledOrShuttingDown {
            let stalls = liveness.stalls()
            if stalls.isEmpty {
                Self.notify("WATCHDOG=1", socketPath: socketPath)
                withheld = false
            } else if !withheld {
                withheld = true
                logger.critical(
                    "stalled: withholding systemd's watchdog so that systemd restarts this process",
                    metadata: ["stalls": "\(stalls.map { "\($0.what) \($0.seconds) s" })"]
                )
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One datagram to the notify socket (a path, or `@name` in the abstract namespace). Best effort, like
    /// `sd_notify`.
    static func notify(_ message: String, socketPath: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }
}
