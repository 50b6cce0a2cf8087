import Foundation
import ReclaimDev
import ReclaimStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Embedded PostgreSQL")
struct EmbeddedPostgresTests {
    #if os(Linux)
    @Test("the server inherits none of the starting process's descriptors (a busy process's once left it none to start with)")
    func noInheritedDescriptors() throws {
        // A descriptor of ours, open while the server starts.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(ends[0])")
        let cluster = try TestPostgres.makeCluster(name: "descriptors")
        defer { try? cluster.stop(immediate: true) }
        let lockFile = try String(contentsOfFile: try cluster.url().socketDirectory! + "/data/postmaster.pid", encoding: .utf8)
        let pid = try #require(lockFile.split(separator: "\n").first.flatMap { Int32($0) })
        let theirs = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")
        }
        #expect(!theirs.isEmpty, "cannot read the server's descriptors")
        #expect(!theirs.contains(ours), "the server holds \(ours), a descriptor of the process that started it")
    }
    #endif
}
