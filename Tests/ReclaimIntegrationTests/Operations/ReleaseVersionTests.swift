import Foundation
import ReclaimService
import ReclaimTestSupport
import Testing

/// CHANGELOG.md is the one source of the version (docs/releasing.md): `reclaim --version` prints its newest release,
/// marked `+unreleased` while the changelog lists unreleased changes, and the commit the binary was built from.
@Suite("reclaim --version is CHANGELOG.md's version and the commit", .poolWatchdog)
struct ReleaseVersionTests {
    /// CHANGELOG.md's version by its own rules, read independently of ReclaimVersion: the first release heading, and
    /// whether an entry (`- `) stands between `## [Unreleased]` and it.
    static func expected(_ changelog: String) throws -> String {
        let newest = try #require(changelog.firstMatch(of: /\n## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}\n/))
        let head = changelog[..<newest.range.lowerBound]
        let unreleased = head.firstRange(of: "## [Unreleased]").map { head[$0.upperBound...].contains("\n- ") } ?? false
        return String(newest.output.1) + (unreleased ? "+unreleased" : "")
    }

    @Test("the version compiled in is CHANGELOG.md's; --version prints it first, with the checkout's commit")
    func version() async throws {
        let changelog = try DeployFilesTests.read("CHANGELOG.md")
        let expected = try Self.expected(changelog)
        #expect(ReclaimVersion.current == expected)
        let printed = try await runProcess(try Binaries.path("reclaim"), ["--version"]).output
        #expect(printed.hasPrefix("\(expected) (commit "), "\(printed)")
        // Built from this checkout: its commit (with -dirty while the work tree differs from it).
        let head = try await runProcess("/usr/bin/env", ["git", "-C", Binaries.repositoryRoot.path, "rev-parse", "HEAD"])
        if head.status == 0 {
            #expect(printed.contains("(commit \(head.output.trimmingCharacters(in: .whitespacesAndNewlines))"), "\(printed)")
        }
    }

    @Test(
        "a changelog with unreleased entries names its newest release +unreleased; an empty Unreleased section, the release alone",
        arguments: [
            ("# Changelog\n\n## [Unreleased]\n\n### Added\n\n- a thing\n\n## [1.2.3] - 2026-12-01\n\n- old\n## [1.2.2]\n", "1.2.3+unreleased"),
            ("# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-12-01\n\n- old\n## [1.2.2]\n", "1.2.3"),
            ("# Changelog\n\n## [1.2.3] - 2026-12-01\n\n- old\n", "1.2.3"),
            ("# Changelog\n\n## [Unreleased]\n\n- the first thing\n", "0.0.0+unreleased"),
        ]
    )
    func marker(changelog: String, version: String) async throws {
        #expect(ReclaimVersion.version(changelog: changelog) == version)
        // scripts/lib/version, which labels the image, gives the same answer.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("changelog-\(UUID().uuidString).md")
        try changelog.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = Binaries.repositoryRoot.appendingPathComponent("scripts/lib/version").path
        let run = try await runProcess(script, [file.path])
        #expect(run.output.trimmingCharacters(in: .whitespacesAndNewlines) == version, "scripts/lib/version: \(run.output)")
    }

    @Test("scripts/lib/version reads the repository's CHANGELOG.md as the binary does")
    func scriptAgrees() async throws {
        let root = Binaries.repositoryRoot
        let run = try await runProcess(root.appendingPathComponent("scripts/lib/version").path, [root.appendingPathComponent("CHANGELOG.md").path])
        #expect(run.output.trimmingCharacters(in: .whitespacesAndNewlines) == ReclaimVersion.current)
    }
}
