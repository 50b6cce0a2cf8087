/// A job whose kind no handler is registered for (e.g. enqueued by a newer release).
struct UnknownJobKind: Error, CustomStringConvertible {
    let kind: String
    var description: String { "no handler registered for job kind '\(kind)'" }
}
