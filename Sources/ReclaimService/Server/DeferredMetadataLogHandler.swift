import Logging

/// Writes exactly what swift-log's `StreamLogHandler` writes, but formats the logger's metadata only for
/// lines it actually writes.
///
/// `StreamLogHandler` formats all of its metadata again whenever one key changes, and Hummingbird and
/// PostgresNIO attach metadata to their loggers on every request and every query: under load, Logger's
/// metadata setter showed up in the server's CPU profile (`scripts/bench ingest`), formatting metadata for
/// lines that were never logged at level info.
/// Here a change only updates the dictionary; the wrapped handler (whose own metadata stays empty)
/// formats it together with the line's metadata when a line passes the level.
struct DeferredMetadataLogHandler: LogHandler {
    private var output: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(output: StreamLogHandler) {
        self.output = output
    }

    var logLevel: Logger.Level {
        get { output.logLevel }
        set { output.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { output.metadataProvider }
        set { output.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merged(provider: metadataProvider, line: event.metadata)
        }
        output.log(event: event)
    }
}

extension Logger.Metadata {
    /// StreamLogHandler's ranks: this (the logger's) metadata, then the provider's, then the line's own.
    func merged(provider: Logger.MetadataProvider?, line: Logger.Metadata?) -> Logger.Metadata {
        var merged = self
        if let provided = provider?.get(), !provided.isEmpty { merged.merge(provided) { _, provided in provided } }
        if let line { merged.merge(line) { _, line in line } }
        return merged
    }
}
