import Foundation

/// Paths of the package's own executables, for tests that run them as separate processes.
enum Binaries {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `RECLAIM_BIN_PATH` (set by scripts/test from `swift build --show-bin-path`), else `.build/debug`.
    static func path(_ name: String) throws -> String {
        let directory = ProcessInfo.processInfo.environment["RECLAIM_BIN_PATH"] ?? repositoryRoot.appendingPathComponent(".build/debug").path
        let path = directory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw DeadlineExceeded(description: "\(path) is not built: run `swift build` first (scripts/test does)")
        }
        return path
    }
}
