import Logging
import ReclaimDomain

/// Writes what swift-log's `StreamLogHandler` writes, with two differences: every value from outside is escaped,
/// and the logger's metadata is formatted only for lines it actually writes.
///
/// Escaping: the message and every metadata key and value has its control characters and line separators
/// escaped (``LogText``), so a value that came from a request (a JWS header, a bundle id) can never start a
/// line of its own that reads like a genuine one (log forging).
///
/// `StreamLogHandler` formats all of its metadata again whenever one key changes, and Hummingbird and
/// PostgresNIO attach metadata to their loggers on every request and every query: under load, Logger's
/// metadata setter showed up in the server's CPU profile (`scripts/bench ingest`), formatting metadata for
/// lines that were never logged at level info.
/// Here a change only updates the dictionary; the wrapped handler (whose own metadata stays empty)
/// formats it together with the line's metadata when a line passes the level.
struct TextLogHandler: LogHandler {
    private var output: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(output: StreamLogHandler) {
        var output = output
        self.metadataProvider = output.metadataProvider
        output.metadataProvider = nil
        self.output = output
    }

    var logLevel: Logger.Level {
        get { output.logLevel }
        set { output.logLevel = newValue }
    }

    /// Merged here, not by the wrapped handler, so that what it provides is escaped too.
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        let merged = metadata.merged(provider: metadataProvider, line: event.metadata)
        event.metadata = merged.isEmpty ? nil : Self.escaped(merged)
        let message = "\(event.message)"
        if message.unicodeScalars.contains(where: LogText.needsEscape) { event.message = "\(LogText.escaped(message))" }
        if let error = event.error, "\(error)".unicodeScalars.contains(where: LogText.needsEscape) {
            event.error = EscapedError(description: LogText.escaped("\(error)"))
        }
        output.log(event: event)
    }

    /// An error whose description had to be escaped.
    private struct EscapedError: Error, CustomStringConvertible {
        let description: String
    }

    /// Metadata with every key and value escaped: it is formatted as `key=value` pairs on one line.
    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out = Logger.Metadata(minimumCapacity: metadata.count)
        for (key, value) in metadata { out[LogText.escaped(key)] = escaped(value) }
        return out
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(LogText.escaped(text))
        case .stringConvertible(let convertible): .string(LogText.escaped(convertible.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let metadata): .dictionary(escaped(metadata))
        }
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
