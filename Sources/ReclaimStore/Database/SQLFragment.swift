import PostgresNIO

/// SQL with the values it binds, written once so that a statement embedding another never counts parameters.
///
/// Each `\(bind:)` is a parameter whose number is given where the fragment ends up, not where it is written: ``sql``
/// numbers them from `$1` in order, ``bind(_:into:)`` appends their values in that same order, and a fragment
/// embedded in another (`\(fragment, from: projection)`) or in a `PostgresQuery` (`\(fragment, with: input)`) is
/// numbered after what precedes it. A `PostgresPreparedStatement` renders ``sql`` once (its SQL must be a static
/// string, prepared by name) and binds per execution, both from the one definition; a dynamic query embeds the same
/// fragment through PostgresNIO's own interpolation, which numbers it from the query's bindings.
struct SQLFragment<Input>: Sendable, ExpressibleByStringInterpolation {
    fileprivate enum Part: Sendable {
        case sql(String)
        case parameter(Parameter)
    }

    /// One parameter's value, read from the input: appended to a prepared statement's bindings, or interpolated
    /// into a query (which appends it and writes its `$n`).
    fileprivate struct Parameter: Sendable {
        let bind: @Sendable (Input, inout PostgresBindings) -> Void
        let interpolate: @Sendable (Input, inout PostgresQuery.StringInterpolation) -> Void
    }

    fileprivate let parts: [Part]

    init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }

    init(stringLiteral value: String) { parts = [.sql(value)] }

    /// The SQL, its parameters numbered `$1`, `$2`… in the order ``bind(_:into:)`` appends them.
    var sql: String {
        var sql = ""
        var number = 0
        for part in parts {
            switch part {
            case .sql(let text): sql += text
            case .parameter:
                number += 1
                sql += "$\(number)"
            }
        }
        return sql
    }

    /// How many parameters ``sql`` has, so how many values ``bind(_:into:)`` appends.
    var parameterCount: Int {
        parts.count {
            if case .parameter = $0 { true } else { false }
        }
    }

    /// Appends `input`'s value of every parameter, in order.
    func bind(_ input: Input, into bindings: inout PostgresBindings) {
        for case .parameter(let parameter) in parts { parameter.bind(input, &bindings) }
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {}

        mutating func appendLiteral(_ literal: String) { parts.append(.sql(literal)) }

        /// SQL text as is (never a value from outside: that is what `bind:` is for).
        mutating func appendInterpolation(unescaped sql: String) { parts.append(.sql(sql)) }

        /// A parameter, whose value `value` reads from the input.
        mutating func appendInterpolation<Value: PostgresDynamicTypeEncodable & Sendable>(bind value: @escaping @Sendable (Input) -> Value) {
            parts.append(
                .parameter(
                    Parameter(
                        bind: { input, bindings in bindings.append(value(input)) },
                        interpolate: { input, query in query.appendInterpolation(value(input)) }
                    )
                )
            )
        }

        /// Another fragment over the same input.
        mutating func appendInterpolation(_ fragment: SQLFragment<Input>) { parts += fragment.parts }

        /// Another fragment, over what `projection` reads from this one's input. The projection runs once per
        /// parameter of `fragment`: a field of a prepared input, not a computation.
        mutating func appendInterpolation<Inner>(_ fragment: SQLFragment<Inner>, from projection: @escaping @Sendable (Input) -> Inner) {
            for part in fragment.parts {
                switch part {
                case .sql(let text): parts.append(.sql(text))
                case .parameter(let inner):
                    parts.append(
                        .parameter(
                            SQLFragment.Parameter(
                                bind: { input, bindings in inner.bind(projection(input), &bindings) },
                                interpolate: { input, query in inner.interpolate(projection(input), &query) }
                            )
                        )
                    )
                }
            }
        }
    }
}

extension PostgresQuery.StringInterpolation {
    /// `fragment` with `input`'s values, its parameters numbered after the query's own (by PostgresNIO's
    /// `appendInterpolation(_:)`, which appends each value and writes its `$n`).
    mutating func appendInterpolation<Input>(_ fragment: SQLFragment<Input>, with input: Input) {
        for part in fragment.parts {
            switch part {
            case .sql(let text): appendInterpolation(unescaped: text)
            case .parameter(let parameter): parameter.interpolate(input, &self)
            }
        }
    }
}
