/// A benchmark that cannot run (a missing argument or setting), reported as its message.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
