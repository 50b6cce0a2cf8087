import Foundation
import ReclaimService
import Testing

/// CHANGELOG.md is the one source of the version (docs/releasing.md): `reclaim --version` prints its newest release
/// and the commit the binary was built from.
@Suite("reclaim --version is CHANGELOG.md's newest release and the commit", .poolWatchdog)
struct ReleaseVersionTests {
    @Test("the version compiled in is CHANGELOG.md's newest release; --version prints it with the checkout's commit")
    func version() async throws {
        let changelog = try DeployFilesTests.read("CHANGELOG.md")
        let newest = try #require(changelog.firstMatch(of: /\n## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}\n/)?.output.1)
        #expect(ReclaimVersion.current == String(newest))
        #expect(ReclaimVersion.newestRelease(in: "# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-12-01\n## [1.2.2]\n") == "1.2.3")
        let printed = try await runProcess(try Binaries.path("reclaim"), ["--version"]).output
        #expect(printed.hasPrefix("\(newest) (commit "), "\(printed)")
        // Built from this checkout: its commit (with -dirty while the work tree differs from it).
        let head = try await runProcess("/usr/bin/env", ["git", "-C", Binaries.repositoryRoot.path, "rev-parse", "HEAD"])
        if head.status == 0 {
            #expect(printed.contains("(commit \(head.output.trimmingCharacters(in: .whitespacesAndNewlines))"), "\(printed)")
        }
    }
}
