import Foundation
import PostgresNIO
import ReclaimDomain

/// One column of `reclaim.subscriptions` and the ``SubscriptionState`` field it holds, declared once
/// (``SubscriptionRow/columns``): the worker's write (``PersistStatement``: its column lists, the JSON row
/// `jsonb_to_recordset` reads, the upsert's SET) and every read of a state are built from these, and a read finds
/// each column by its name. A field added to the state is one line there; left out, the round-trip test of every
/// field fails.
struct SubscriptionColumn: Sendable {
    /// A value of the JSON row the worker writes (a nil field is left out: NULL).
    enum JSONValue: Encodable, Equatable {
        case text(String)
        case bool(Bool)
        case integer(Int64)
        case texts([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .texts(let value): try container.encode(value)
            }
        }
    }

    let name: String
    /// How `jsonb_to_recordset` reads the JSON row's value (a time as `bigint` microseconds since 2000).
    let recordType: String
    /// The value travels as microseconds since 2000 and is stored as `timestamptz`.
    let isTime: Bool
    /// Part of the primary key: never in the upsert's SET.
    let isKey: Bool
    let value: @Sendable (SubscriptionState) -> JSONValue?
    let read: @Sendable (inout SubscriptionState, PostgresCell) throws -> Void

    /// The record's value as the column's: a time's microseconds turned into `timestamptz` (NULL stays NULL).
    func inserted(from record: String) -> String {
        isTime ? "timestamptz '2000-01-01 00:00:00+00' + \(record).\(name) * interval '1 microsecond'" : "\(record).\(name)"
    }
}

extension SubscriptionColumn {
    /// A field of the state (key paths are immutable values: safe to share between tasks).
    typealias WritablePath<Value> = any WritableKeyPath<SubscriptionState, Value> & Sendable

    /// A key column: text, never NULL.
    static func key(_ name: String, _ path: WritablePath<String>) -> Self {
        .init(
            name: name,
            recordType: "text",
            isTime: false,
            isKey: true,
            value: { .text($0[keyPath: path]) },
            read: {
                $0[keyPath: path] = try $1.decode(String.self)
            }
        )
    }

    static func text(_ name: String, _ path: WritablePath<String?>) -> Self {
        .init(
            name: name,
            recordType: "text",
            isTime: false,
            isKey: false,
            value: { $0[keyPath: path].map(JSONValue.text) },
            read: {
                $0[keyPath: path] = try $1.decode(String?.self)
            }
        )
    }

    /// A UUID, in PostgreSQL's (lowercase) form.
    static func uuid(_ name: String, _ path: WritablePath<UUID?>) -> Self {
        .init(
            name: name,
            recordType: "uuid",
            isTime: false,
            isKey: false,
            value: { $0[keyPath: path].map { .text($0.uuidString.lowercased()) } },
            read: {
                $0[keyPath: path] = try $1.decode(UUID?.self)
            }
        )
    }

    static func bool(_ name: String, _ path: WritablePath<Bool?>) -> Self {
        .init(
            name: name,
            recordType: "boolean",
            isTime: false,
            isKey: false,
            value: { $0[keyPath: path].map(JSONValue.bool) },
            read: {
                $0[keyPath: path] = try $1.decode(Bool?.self)
            }
        )
    }

    static func time(_ name: String, _ path: WritablePath<Date?>) -> Self {
        .init(
            name: name,
            recordType: "bigint",
            isTime: true,
            isKey: false,
            value: { $0[keyPath: path].map { .integer(microseconds($0)) } },
            read: {
                $0[keyPath: path] = try $1.decode(Date?.self)
            }
        )
    }

    /// A small number as `smallint` (Apple's expirationIntent 1–5, billing periods): a signed payload's out-of-range number
    /// is dropped, never trapped on.
    static func smallint(_ name: String, _ path: WritablePath<Int?>) -> Self {
        .init(
            name: name,
            recordType: "smallint",
            isTime: false,
            isKey: false,
            value: { $0[keyPath: path].flatMap { Int16(exactly: $0) }.map { .integer(Int64($0)) } },
            read: { $0[keyPath: path] = try $1.decode(Int16?.self).map(Int.init) }
        )
    }

    static func bigint(_ name: String, _ path: WritablePath<Int64?>) -> Self {
        .init(
            name: name,
            recordType: "bigint",
            isTime: false,
            isKey: false,
            value: { $0[keyPath: path].map(JSONValue.integer) },
            read: {
                $0[keyPath: path] = try $1.decode(Int64?.self)
            }
        )
    }

    static func texts(_ name: String, _ path: WritablePath<[String]>) -> Self {
        .init(
            name: name,
            recordType: "text[]",
            isTime: false,
            isKey: false,
            value: { .texts($0[keyPath: path]) },
            read: {
                $0[keyPath: path] = try $1.decode([String].self)
            }
        )
    }

    static func status(_ name: String) -> Self {
        .init(
            name: name,
            recordType: "text",
            isTime: false,
            isKey: false,
            value: { .text($0.status.rawValue) },
            read: {
                $0.status = SubscriptionState.Status(rawValue: try $1.decode(String.self)) ?? .unknown
            }
        )
    }

    private static let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)

    /// Microseconds since 2000-01-01, truncated as PostgresNIO truncates a bound `Date`; clamped, since a date from a
    /// signed payload is outside input and `Int64(_:)` traps on what it cannot hold.
    static func microseconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince(postgresEpoch) * 1_000_000
        guard value.isFinite else { return 0 }
        return Int64(max(min(value, 9.2e18), -9.2e18))
    }
}
