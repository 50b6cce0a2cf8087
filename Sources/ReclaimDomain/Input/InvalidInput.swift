/// Input from outside that is not what it must be, with the reason in words (the HTTP layer answers 400 with it).
public struct InvalidInput: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
