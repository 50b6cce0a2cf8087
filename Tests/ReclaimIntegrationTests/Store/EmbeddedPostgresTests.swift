import Foundation
import ReclaimDev
import ReclaimStore
import Testing

#if canImport(Glibc)
import Glibc
import ReclaimTestSupport
#endif

@Suite("Embedded PostgreSQL", .poolWatchdog)
struct EmbeddedPostgresTests {
    #if os(Linux)
    @Test("a cluster's port lies outside the kernel's ephemeral range: no outgoing connection can take it between a stop and a start")
    func portOutsideTheEphemeralRange() async throws {
        // CI's restart test failed with "could not bind 127.0.0.1: Address already in use": the port, from binding
        // port 0, had become the local end of some connection while the server was stopped.
        let ephemeral = try #require(LoopbackPort.ephemeralRange())
        try #require(ephemeral.lowerBound > 10_001, "this machine's ephemeral range leaves no room below it")
        let cluster = try await TestPostgres.makeCluster(name: "port")
        defer { cluster.stopInBackground() }
        let port = try cluster.url().port
        #expect(!ephemeral.contains(port), "the cluster's port \(port) is in \(ephemeral)")
        for _ in 0..<50 {
            let free = try LoopbackPort.free()
            #expect(!ephemeral.contains(free), "\(free) is in \(ephemeral)")
        }
    }

    @Test("the server inherits none of the starting process's descriptors (a busy process's once left it none to start with)")
    func noInheritedDescriptors() async throws {
        // A descriptor of ours, open while the server starts.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(ends[0])")
        let cluster = try await TestPostgres.makeCluster(name: "descriptors")
        defer { cluster.stopInBackground() }
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
