import Foundation
import Logging
import ReclaimDomain

/// One JSON object a line (`LOG_FORMAT=json`), for log collectors: `time` (ISO 8601, UTC), `level`,
/// `label`, `message`, `source`, then the metadata as string fields. Hummingbird's `hb.request.id` is
/// written as `request_id`, the id the response's `X-Request-Id` header carries.
///
/// Like ``TextLogHandler`` it formats metadata only for lines it writes. Secrets never reach a
/// logger in the first place; this handler adds nothing to what the code logs.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let write: @Sendable (String) -> Void

    init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError)
    {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merged(provider: metadataProvider, line: event.metadata)
        write(Self.line(time: Date(), level: event.level, label: label, message: "\(event.message)", source: event.source, metadata: merged))
    }

    /// The line for one event, newline included. Fields the handler writes itself win over metadata of the same name.
    static func line(time: Date, level: Logger.Level, label: String, message: String, source: String, metadata: Logger.Metadata) -> String {
        var fields: [(String, String)] = [
            ("time", time.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))),
            ("level", level.rawValue),
            ("label", label),
            ("message", message),
            ("source", source),
        ]
        let reserved = Set(fields.map(\.0))
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let name = key == "hb.request.id" ? "request_id" : key
            guard !reserved.contains(name) else { continue }
            fields.append((name, "\(value)"))
        }
        var out = "{"
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { out += "," }
            appendQuoted(key, to: &out)
            out += ":"
            appendQuoted(value, to: &out)
        }
        out += "}\n"
        return out
    }

    /// A JSON string literal (RFC 8259 §7): quotes, backslashes and control characters escaped.
    static func appendQuoted(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where LogText.needsEscape(c):
                // Control characters must be escaped (RFC 8259 §7); line separators and the rest are, so that
                // no viewer of the raw log shows a forged line.
                out += "\\u"
                out += String(c.value, radix: 16).leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// One write(2) per line, so lines from concurrent tasks never interleave.
    @Sendable static func standardError(_ line: String) {
        FileHandle.standardError.write(Data(line.utf8))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
