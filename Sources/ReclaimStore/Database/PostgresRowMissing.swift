/// A statement that must return a row (an upsert's or an insert's RETURNING) returned none: the database is not
/// the one this code was written for.
public struct PostgresRowMissing: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "no row returned for \(what)" }
}
