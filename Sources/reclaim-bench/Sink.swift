import Foundation
import Hummingbird
import Logging
import NIOCore

/// `reclaim-bench sink PORTFILE`: an HTTP receiver on loopback that answers 200 to every POST, for
/// `scripts/bench e2e`'s forwarding phase: a target that costs little CPU, so the figure is Reclaim's. Writes
/// its port to PORTFILE once listening; runs until killed.
enum Sink {
    static func run(_ options: BenchOptions) async throws {
        let portFile = try options.positional(0)
        let router = Router()
        router.post("/**") { request, _ -> HTTPResponse.Status in
            _ = try await request.body.collect(upTo: 1 << 20)
            return .ok
        }
        var logger = Logger(label: "sink")
        logger.logLevel = .warning
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                try? Data("\(port)\n".utf8).write(to: URL(fileURLWithPath: portFile), options: .atomic)
            },
            logger: logger
        )
        try await app.runService()
    }
}
