import Logging
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

/// The log handler that formats metadata only when it writes must write what StreamLogHandler writes.
@Suite(.poolWatchdog) struct LogHandlerTests {
    /// Collects what a handler writes.
    final class Capture: TextOutputStream, Sendable {
        private let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
        /// The lines without their leading timestamp (two runs may straddle a second).
        var lines: [Substring] { text.withLock { $0 }.split(separator: "\n").map { $0.drop(while: { $0 != " " }) } }
    }

    /// The same sequence of metadata changes and lines, through handlers made by `handler`.
    private func lines(_ handler: @escaping @Sendable (String, Capture, Logger.MetadataProvider?) -> any LogHandler) -> [Substring] {
        let capture = Capture()
        var logger = Logger(label: "reclaim") { handler($0, capture, nil) }
        logger.logLevel = .info
        logger[metadataKey: "request"] = "42"
        logger[metadataKey: "connection"] = "7"
        logger.debug("not written")
        logger.info("plain line")
        logger.notice("with metadata", metadata: ["request": "override", "alpha": "1"])
        logger[metadataKey: "connection"] = nil
        logger.error("after removal", metadata: ["z": ["a", "b"]])
        var quiet = Logger(label: "empty") { handler($0, capture, nil) }
        quiet.logLevel = .info
        quiet.warning("no metadata at all")
        // A metadata provider ranks above the logger's metadata and below the line's.
        let provider = Logger.MetadataProvider { ["trace": "provided", "request": "provided"] }
        var traced = Logger(label: "traced") { handler($0, capture, provider) }
        traced[metadataKey: "request"] = "42"
        traced[metadataKey: "trace"] = "logger"
        traced.info("provider over logger")
        traced.info("line over provider", metadata: ["trace": "line"])
        return capture.lines
    }

    @Test("same lines as StreamLogHandler: logger, provider and line metadata merged in its order, sorted, levels filtered")
    func sameLinesAsStreamLogHandler() {
        let reference = lines { StreamLogHandler(label: $0, stream: $1, metadataProvider: $2) }
        let ours = lines { TextLogHandler(output: StreamLogHandler(label: $0, stream: $1, metadataProvider: $2)) }
        #expect(reference.count == 6)
        #expect(reference.last == " info traced: request=provided trace=line [ReclaimIntegrationTests] line over provider")
        #expect(ours == reference)
        #expect(ours.first == " info reclaim: connection=7 request=42 [ReclaimIntegrationTests] plain line")
    }
}
