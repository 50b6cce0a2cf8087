/// A statement that should have returned a row returned none.
public struct PostgresRowMissing: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "no row returned for \(what)" }
}
