import Foundation
import PostgresNIO

/// The columns of a batch insert that sends every column as one array and reads the rows back with `unnest`, each
/// column written once (its name, its SQL type, how a row gives its value), so that the insert's column list, its
/// SELECT, the typed arrays of the `unnest` and the values bound to them cannot drift apart or be miscounted.
///
/// Arrays cannot carry NULL through PostgresNIO's encoders: a `nullable` column sends a stand-in (the nil UUID, or
/// '') and the SELECT restores NULL with NULLIF, so no row may hold the stand-in itself.
struct UnnestColumns<Row>: Sendable {
    struct Column: Sendable {
        let name: String
        /// What the column's value is in the SELECT, over the unnest's alias.
        let value: @Sendable (_ alias: String) -> String
        /// `$n::type[]`: the column's array and the rows' values in it.
        let array: SQLFragment<[Row]>
        /// Inserted into the table; a column that is not is only read by the caller's WHERE (a deadline, say).
        var isInserted = true

        init<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>(
            _ name: String,
            _ type: String,
            _ element: @escaping @Sendable (Row) -> Element
        ) {
            self.init(name, type, element, value: { "\($0).\(name)" })
        }

        private init<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>(
            _ name: String,
            _ type: String,
            _ element: @escaping @Sendable (Row) -> Element,
            value: @escaping @Sendable (String) -> String
        ) {
            self.name = name
            self.value = value
            array = "\(bind: { $0.map(element) })::\(unescaped: type)[]"
        }

        /// A uuid column that may be NULL: the nil UUID stands for it.
        static func nullable(_ name: String, _ element: @escaping @Sendable (Row) -> UUID?) -> Column {
            Column(name, "uuid", { element($0) ?? nilUUID }, value: { "NULLIF(\($0).\(name), '\(nilUUID)')" })
        }

        /// An interval column, sent as whole seconds.
        static func interval(_ name: String, _ seconds: @escaping @Sendable (Row) -> Int64) -> Column {
            Column(name, "bigint", seconds, value: { "make_interval(secs => \($0).\(name))" })
        }

        /// A column of the unnest only, not of the table: for the caller's WHERE over the alias.
        static func filter<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>(
            _ name: String,
            _ type: String,
            _ element: @escaping @Sendable (Row) -> Element
        ) -> Column {
            var column = Column(name, type, element)
            column.isInserted = false
            return column
        }

        /// A text column that may be NULL: '' stands for it.
        static func nullable(_ name: String, _ element: @escaping @Sendable (Row) -> String?) -> Column {
            Column(name, "text", { element($0) ?? "" }, value: { "NULLIF(\($0).\(name), '')" })
        }
    }

    /// The alias of the unnest's rows, for the SELECT and for what the caller appends (a WHERE, say).
    let alias: String
    let columns: [Column]

    init(alias: String, _ columns: [Column]) {
        self.alias = alias
        self.columns = columns
    }

    /// `INSERT INTO table (…) SELECT … FROM unnest($n::type[], …) AS alias(…)`, for the caller to complete (WHERE,
    /// ON CONFLICT, RETURNING); bound with the rows to insert.
    func insert(into table: String) -> SQLFragment<[Row]> {
        let inserted = columns.filter(\.isInserted)
        let names = inserted.map(\.name).joined(separator: ", ")
        let values = inserted.map { $0.value(alias) }.joined(separator: ", ")
        var sql = SQLFragment<[Row]>.StringInterpolation(literalCapacity: 0, interpolationCount: columns.count)
        sql.appendLiteral("INSERT INTO \(table) (\(names))\nSELECT \(values)\nFROM unnest(")
        for (index, column) in columns.enumerated() {
            if index > 0 { sql.appendLiteral(", ") }
            sql.appendInterpolation(column.array)
        }
        sql.appendLiteral(") AS \(alias)(\(columns.map(\.name).joined(separator: ", ")))")
        return SQLFragment(stringInterpolation: sql)
    }
}

/// NULL's stand-in in uuid arrays (no offer, decision, grant, token or notification has the nil UUID).
private let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
