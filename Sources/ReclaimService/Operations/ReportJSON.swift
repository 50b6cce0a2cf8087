import Foundation

/// The one JSON form of every report command's `--json` (`campaigns report`, `refunds report`, `subscribers show`
/// and `forget`, `backfill --dry-run`): pretty-printed, keys sorted, so that two runs diff line by line.
public enum ReportJSON {
    public static func render(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
