import Foundation
import PostgresNIO
import ReclaimTestSupport
import Testing

@testable import ReclaimStore

@Suite("SQLFragment and UnnestColumns: SQL and its bindings from one definition, numbered where they are placed", .poolWatchdog)
struct SQLFragmentTests {
    private struct Pair {
        var id: UUID
        var label: String?
    }

    private static let pairs = UnnestColumns<Pair>(
        alias: "p",
        [
            .init("id", "uuid") { $0.id },
            .nullable("label") { $0.label },
        ]
    )

    /// The `$n` of `sql`, in order.
    private func placeholders(_ sql: String) -> [Int] {
        sql.matches(of: /\$(\d+)/).map { Int($0.1)! }
    }

    @Test("parameters are numbered in order, one value bound for each")
    func numbering() {
        let fragment: SQLFragment<Pair> = "id = \(bind: \.id) AND label = \(bind: { $0.label ?? "" })"
        #expect(fragment.sql == "id = $1 AND label = $2")
        #expect(fragment.parameterCount == 2)
        var bindings = PostgresBindings()
        fragment.bind(Pair(id: UUID(), label: nil), into: &bindings)
        #expect(bindings.count == 2)
    }

    @Test("an unnest insert renders its columns, arrays and NULL stand-ins, and binds one array per column")
    func unnestInsert() {
        let insert = Self.pairs.insert(into: "t")
        #expect(
            insert.sql == """
                INSERT INTO t (id, label)
                SELECT p.id, NULLIF(p.label, '')
                FROM unnest($1::uuid[], $2::text[]) AS p(id, label)
                """
        )
        let rows = [Pair(id: UUID(), label: "a"), Pair(id: UUID(), label: nil)]
        var bindings = PostgresBindings()
        insert.bind(rows, into: &bindings)
        var expected = PostgresBindings()
        expected.append(rows.map(\.id))
        expected.append(["a", ""])
        #expect(bindings == expected)
        // Rendering is stable: a prepared statement renders its SQL once, and any later render must be the same.
        #expect(Self.pairs.insert(into: "t").sql == insert.sql)
    }

    @Test("embedded after other parameters, a fragment is numbered after them, in a fragment and in a PostgresQuery")
    func embedded() {
        struct Outer {
            var first: String
            var rows: [Pair]
        }
        let rows = [Pair(id: UUID(), label: nil)]
        let outer: SQLFragment<Outer> = "WITH a AS (SELECT \(bind: \.first)) \(Self.pairs.insert(into: "t"), from: \.rows) RETURNING 1"
        #expect(placeholders(outer.sql) == [1, 2, 3])
        #expect(outer.sql.contains("unnest($2::uuid[], $3::text[])"))
        var bindings = PostgresBindings()
        outer.bind(Outer(first: "x", rows: rows), into: &bindings)
        var expected = PostgresBindings()
        expected.append("x")
        expected.append(rows.map(\.id))
        expected.append([""])
        #expect(bindings == expected)

        let query: PostgresQuery = "SELECT \(1), \("two") \(outer, with: Outer(first: "x", rows: rows)) AND \(true)"
        #expect(placeholders(query.sql) == [1, 2, 3, 4, 5, 6])
        #expect(query.sql.contains("WITH a AS (SELECT $3) INSERT INTO t"))
        #expect(query.sql.contains("unnest($4::uuid[], $5::text[])"))
        #expect(query.binds.count == 6)
    }

    @Test("the offers insert and the persist statement bind exactly the parameters their SQL numbers")
    func statements() throws {
        let offers = OfferInsert.insert(where: "true")
        #expect(placeholders(offers.sql) == Array(1...OfferInsert.columns.columns.count))
        var bindings = PostgresBindings()
        offers.bind([], into: &bindings)
        #expect(bindings.count == OfferInsert.columns.columns.count)

        // Every placeholder once, $1 to $n, and n values: the states, the decisions' arrays and the offers' arrays.
        #expect(placeholders(PersistStatement.sql) == Array(1...(1 + 13 + 22)))
        #expect(try PersistStatement(writes: []).makeBindings().count == 1 + 13 + 22)
        #expect(PersistStatement.sql.contains("FROM unnest($15::uuid[]"))
    }
}
