/// ``CommitBatcher`` refused a caller because its wait queue is full.
public struct CommitQueueFull: Error, CustomStringConvertible {
    public var description: String { "the commit queue is full" }
}
