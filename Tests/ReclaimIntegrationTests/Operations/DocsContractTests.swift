import Foundation
import ReclaimService
import Testing

/// README.md and docs/architecture.md name only what Reclaim has, and every config key and command it has: the
/// architecture doc's contract once lacked 15 keys and 6 commands.
@Suite("README.md and docs/architecture.md name what Reclaim has")
struct DocsContractTests {
    static let readme = (try? DeployFilesTests.read("README.md")) ?? ""
    static let architecture = (try? DeployFilesTests.read("docs/architecture.md")) ?? ""

    /// README's Configuration example.
    static var readmeConfig: String {
        readme.firstMatch(of: /## Configuration[\s\S]*?```yaml\n([\s\S]*?)```/).map { String($0.output.1) } ?? ""
    }

    /// The architecture doc's configuration contract.
    static var architectureConfig: String {
        architecture.firstMatch(of: /\*\*Configuration\*\*([\s\S]*?)The schema is one/).map { String($0.output.1) } ?? ""
    }

    @Test("README's configuration example loads, unknown keys refused; every key the code knows is in it and in the architecture contract")
    func configKeys() throws {
        #expect(!Self.readmeConfig.isEmpty)
        _ = try ReclaimConfig.parse(yaml: Self.readmeConfig, source: "README.md")
        for path in ReclaimConfig.keyPaths.sorted() {
            let key = String(path.split(separator: ".").last ?? "")
            // The example's comments name the alternatives (serverAPI's keyId and file beside signingKey).
            #expect(Self.readmeConfig.contains("\(key):"), "README.md's configuration lacks \(path)")
            #expect(Self.architectureConfig.contains(key), "docs/architecture.md's contract lacks \(path)")
        }
    }

    /// Every `reclaim …` command in backquotes of `text`, as its words and flags.
    static func commands(in text: String) -> [(words: [String], flags: [String])] {
        text.matches(of: /`(reclaim [^`]*)`/).map { match in
            let parts = match.output.1.split(whereSeparator: { " []|".contains($0) }).map(String.init).dropFirst()
            let words = Array(parts.prefix { $0.range(of: "^[a-z][a-z-]*$", options: .regularExpression) != nil })
            let flags = parts.filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) }
            return (words, flags)
        }
    }

    @Test("every command the docs name exists with its flags, and every command Reclaim has is in README and the contract")
    func commands() throws {
        let reclaim = try Binaries.path("reclaim")
        let named = Self.commands(in: Self.readme) + Self.commands(in: Self.architecture)
        #expect(named.count >= 30)
        var checked = Set<String>()
        for (words, flags) in named where !words.isEmpty {
            let key = (words + flags).joined(separator: " ")
            guard checked.insert(key).inserted else { continue }
            let help = try runProcess(reclaim, words + ["--help"])
            #expect(help.status == 0, "reclaim \(words.joined(separator: " ")) is not a command: \(help.errors)")
            for flag in flags where flag != "--help" {
                // The whole flag: `--notification` is not `--notifications`.
                let found = help.output.range(of: NSRegularExpression.escapedPattern(for: flag) + "(?![a-z-])", options: .regularExpression) != nil
                #expect(found, "reclaim \(words.joined(separator: " ")) has no \(flag)")
            }
        }
        // The other way: every subcommand, and every subcommand of a group, is documented in both.
        func subcommands(_ words: [String]) throws -> [String] {
            let help = try runProcess(reclaim, words + ["--help"]).output
            guard let list = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first else { return [] }
            return list.split(separator: "\n").compactMap { line in
                line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
            }.filter { $0 != "help" && $0 != "See" }
        }
        for top in try subcommands([]) {
            let groups = try subcommands([top])
            for words in groups.isEmpty ? [[top]] : groups.map({ [top, $0] }) {
                let text = "reclaim " + words.joined(separator: " ")
                #expect(Self.readme.contains("`\(text)"), "README.md does not document \(text)")
                #expect(Self.architecture.contains("`\(text)"), "docs/architecture.md's contract lacks \(text)")
            }
        }
        #expect(try runProcess(reclaim, ["--version"]).output.contains(ReclaimVersion.current))
    }

    @Test("the README's run command installs what running needs, not the test tools; scripts/test adds those")
    func installDeps() throws {
        let script = Binaries.repositoryRoot.appendingPathComponent("scripts/install-deps").path
        let running = Set(try runProcess("/bin/bash", [script, "--list"]).output.split(whereSeparator: \.isWhitespace).map(String.init))
        let testing = Set(try runProcess("/bin/bash", [script, "--test", "--list"]).output.split(whereSeparator: \.isWhitespace).map(String.init))
        #expect(running.contains("postgresql"))
        for tool in ["chromium", "chromium-driver", "pip:selenium", "pip:schemathesis"] {
            #expect(!running.contains(tool), "running Reclaim does not need \(tool)")
            #expect(testing.contains(tool), "the tests need \(tool)")
        }
        #expect(Self.readme.contains("scripts/install-deps && swift run reclaim dev"))
        #expect(try DeployFilesTests.read("scripts/test").contains("scripts/install-deps --test"))
        #expect(Self.readme.contains("brew install postgresql"), "what a macOS user runs instead")
    }
}
