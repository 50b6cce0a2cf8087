import Foundation
import ReclaimStore
import Testing

#if canImport(Glibc)
import Glibc
import ReclaimTestSupport
#endif

/// Issue 28: under systemd (`WatchdogSec=` in deploy/systemd), a healthy `reclaim serve` pings the watchdog
/// through `$NOTIFY_SOCKET`, the datagram protocol of sd_notify(3).
@Suite("systemd watchdog", .poolWatchdog)
struct SystemdWatchdogTests {
    @Test("reclaim serve sends WATCHDOG=1 to $NOTIFY_SOCKET twice per $WATCHDOG_USEC while it is healthy")
    func pings() async throws {
        let setup = try CampaignTestSetup()
        defer { setup.remove() }
        let socketPath = setup.directory.appendingPathComponent("notify.sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in socketPath.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "cannot bind \(socketPath): errno \(errno)")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        try await withTestDatabase { _, url in
            let server = try ServerProcess(
                role: "all",
                config: setup.configFile,
                databaseURL: url.connectionString,
                log: setup.directory.appendingPathComponent("serve.log"),
                extraEnvironment: ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "400000"]
            )
            try server.start()
            defer { server.stopInBackground() }
            var messages: [String] = []
            let started = ContinuousClock.now
            while messages.filter({ $0 == "WATCHDOG=1" }).count < 3 && ContinuousClock.now - started < .seconds(30) {
                let message = try await RawSocket.onThread { () -> String? in
                    var buffer = [UInt8](repeating: 0, count: 256)
                    let count = recv(fd, &buffer, buffer.count, 0)
                    return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
                }
                if let message { messages.append(message) }
            }
            #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 3, "received \(messages)")
        }
    }
}
