/// A configuration mistake, told in words an operator can act on.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
