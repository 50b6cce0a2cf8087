import Foundation
import PostgresNIO
import Synchronization

/// The first column of the first row as an Int: nil when there is no row or it is NULL.
func firstInt(_ client: PostgresClient, _ sql: String) async throws -> Int? {
    for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestPostgres.logger).decode(Int?.self) { return value }
    return nil
}

/// Lines written from any task, for tests that read what a log handler or a command reported.
final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Runs a program to its end: its exit status, standard output and standard error. Blocks the calling thread.
func runProcess(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> (status: Int32, output: String, errors: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdin = Pipe()
    let stdout = Pipe()
    // Standard error goes to a file, so that neither stream can fill a pipe and stall the program.
    let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-stderr-\(UUID().uuidString)")
    FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorsFile) }
    if input != nil { process.standardInput = stdin }
    process.standardOutput = stdout
    process.standardError = try FileHandle(forWritingTo: errorsFile)
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
    }
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errors = (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
    return (process.terminationStatus, String(decoding: output, as: UTF8.self), errors)
}
