import Foundation
import ReclaimService
import Testing
import Yams

/// Docs that stay true (issue 53): what DocsContractTests holds for inline commands, held also for the rest a reader
/// copies or follows: the commands of the pages' shell blocks, the ReclaimClient and StoreKit symbols docs/ios.md and
/// README.md name, the metrics the alert rules use (each in docs/operations.md's table), and every path and link a
/// document gives, which must stay inside the repository.
extension DocsContractTests {
    // MARK: Commands in code blocks

    /// Every `reclaim …` line of the shell code blocks of `text` (a comment after `#` dropped), as its line, the words
    /// after `reclaim` that may name the command (at most two), and its flags.
    static func blockCommands(in text: String) -> [(line: String, words: [String], flags: [String])] {
        var found: [(String, [String], [String])] = []
        // Fences paired in order, each opening with its language: a closing fence is never taken for an opening one.
        var blocks: [[Substring]] = []
        var open: (shell: Bool, lines: [Substring])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.trimmingCharacters(in: .whitespaces).hasPrefix("```") else {
                open?.lines.append(line)
                continue
            }
            if let block = open {
                if block.shell { blocks.append(block.lines) }
                open = nil
            } else {
                let language = line.trimmingCharacters(in: .whitespaces).dropFirst(3)
                open = (["", "sh", "bash", "console", "shell"].contains(language), [])
            }
        }
        for block in blocks {
            for raw in block {
                let line = String(raw.split(separator: " #", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                guard let match = line.firstMatch(of: /(?:^|\s)reclaim\s+([a-z][^\n]*)$/) else { continue }
                let tokens = match.output.1.split(whereSeparator: { " []|".contains($0) }).map(String.init)
                let words = Array(tokens.prefix { $0.range(of: "^[a-z][a-z-]*$", options: .regularExpression) != nil }.prefix(2))
                let flags = tokens.filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) }
                found.append((line.trimmingCharacters(in: .whitespaces), words, flags))
            }
        }
        return found
    }

    @Test("every reclaim command of every page's shell blocks exists, with each flag it passes")
    func commandsInCodeBlocks() async throws {
        let reclaim = try Binaries.path("reclaim")
        let leaves = try await DocsContractTests.leafCommands(reclaim)
        var helps: [[String]: Set<String>] = [:]
        var checked = 0
        for page in DocsContractTests.pages {
            for (line, words, flags) in Self.blockCommands(in: try DeployFilesTests.read(page)) {
                let command = leaves.first { $0 == words } ?? leaves.first { $0 == Array(words.prefix(1)) }
                guard let command else {
                    Issue.record("\(page): `\(line)`: reclaim has no command \(words.joined(separator: " "))")
                    continue
                }
                if helps[command] == nil { helps[command] = try await DocsContractTests.flags(reclaim, command) }
                for flag in flags where !(helps[command] ?? []).contains(flag) {
                    Issue.record("\(page): `\(line)`: reclaim \(command.joined(separator: " ")) has no \(flag)")
                }
                checked += 1
            }
        }
        #expect(checked >= 30, "\(checked) command lines")
        // The check has teeth: a made-up command and a made-up flag are caught.
        let made = Self.blockCommands(in: "```sh\nreclaim campaigns rport --since 30d\nreclaim backfill --transaction ids.txt  # a comment\n```\n")
        #expect(made.map(\.words) == [["campaigns", "rport"], ["backfill"]] && made.map(\.flags) == [["--since"], ["--transaction"]])
        let backfillFlags = try await DocsContractTests.flags(reclaim, ["backfill"])
        #expect(!leaves.contains(["campaigns", "rport"]) && !backfillFlags.contains("--transaction") && backfillFlags.contains("--transactions"))
    }

    // MARK: ReclaimClient and StoreKit symbols

    /// The selectors (`name(label:label:)`, `_` for an unlabelled parameter) of every function and initializer in
    /// `source`, parameters read with their nesting (a closure type's parentheses are inside one parameter); a call may
    /// leave out parameters with defaults, so each selector also comes without any of those.
    static func selectors(in source: String) -> Set<String> {
        let code = source.replacing(/\/\/[^\n]*/, with: "").replacingOccurrences(of: "->", with: "→")
        var found = Set<String>()
        for match in code.matches(of: /(?:func\s+(\w+)|\b(init))\s*(?:<[^>{]*>)?\(/) {
            let name = String(match.output.1 ?? match.output.2 ?? "")
            var depth = 1
            var index = match.range.upperBound
            var parameters = ""
            while index < code.endIndex, depth > 0 {
                let character = code[index]
                if "([<".contains(character) { depth += 1 }
                if ")]>".contains(character) { depth -= 1 }
                if depth > 0 { parameters.append(depth == 1 && character == "," ? "\u{0}" : character) }
                index = code.index(after: index)
            }
            let labelled = parameters.split(separator: "\u{0}").compactMap { parameter -> (label: String, defaulted: Bool)? in
                let parts = parameter.split(separator: ":", maxSplits: 1)
                let head = parts.first?.split(whereSeparator: \.isWhitespace) ?? []
                guard let first = head.first else { return nil }
                return (head.count >= 2 ? String(first) : String(head.last ?? first), parts.count == 2 && parts[1].contains("="))
            }
            let defaulted = labelled.indices.filter { labelled[$0].defaulted }
            for mask in 0..<(1 << defaulted.count) {
                let dropped = Set(defaulted.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
                let kept = labelled.indices.filter { !dropped.contains($0) }.map { labelled[$0].label + ":" }
                found.insert("\(name)(\(kept.joined()))")
            }
        }
        return found
    }

    @Test(
        "every function docs/ios.md and README.md name in backquotes is declared by ReclaimClient, the transcribed StoreKit, or the checked app code; every member of the client's types they name exists"
    )
    func clientSymbols() throws {
        let declaring =
            try DeployFilesTests.files(under: "Sources/ReclaimClient", extensions: ["swift"])
            + DeployFilesTests.files(under: "Tests/StoreKitInterface", extensions: ["swift"])
            + DeployFilesTests.files(under: "Examples", extensions: ["swift"])
        let sources = try declaring.map { try DeployFilesTests.read($0) }.joined(separator: "\n")
        let known = Self.selectors(in: sources)
        #expect(known.contains("pendingOffers(for:appAccountToken:)") && known.contains("promotionalOffer(_:compactJWS:)"), "\(known.sorted())")
        #expect(Self.selectors(in: "func f(_ a: Int, b c: () -> Void, d: [String: (Int, Int)] = [:]) // g(x:)") == ["f(_:b:d:)", "f(_:b:)"])
        let client = try DeployFilesTests.files(under: "Sources/ReclaimClient", extensions: ["swift"]).map { try DeployFilesTests.read($0) }.joined()
        var named = 0
        for page in ["docs/ios.md", "README.md"] {
            let text = try DeployFilesTests.read(page)
            for match in text.matches(of: /`[^`\n]*?\b(\w+\((?:[A-Za-z_]+:)*\))`/) {
                let selector = String(match.output.1)
                named += 1
                #expect(
                    known.contains(selector),
                    "\(page) names \(selector), which neither ReclaimClient, the StoreKit transcription nor the app code declares"
                )
            }
            // Members of the client's own types: `ReclaimClientError.offerNoLongerAvailable`, `PendingOffer.refetchAge`,
            // `offer.storeKit1.applicationUsername`.
            for match in text.matches(of: /`(?:ReclaimClientError|PendingOffer|ReclaimClient|OfferEvent|offer\.storeKit1|offer\.storeKit2)\.(\w+)/) {
                let member = String(match.output.1)
                let declared = client.range(of: "(case|var|let|func) \(member)\\b", options: .regularExpression) != nil
                #expect(declared, "\(page) names \(match.output.0.dropFirst()), which ReclaimClient does not declare")
                named += 1
            }
        }
        #expect(named >= 30, "\(named) symbols named")
    }

    // MARK: Alert metrics

    @Test("every metric an alert rule uses is in docs/operations.md's metrics table")
    func alertMetricsDocumented() throws {
        let operations = try DeployFilesTests.read("docs/operations.md")
        let observability = operations.components(separatedBy: "## Observability").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        let table = Set(
            observability.split(separator: "\n").filter { $0.hasPrefix("| `") }.flatMap { row in
                (row.split(separator: "|").first.map(String.init) ?? "").matches(of: /`(reclaim_[a-z0-9_]+|hb_[a-z_]+|http_[a-z_]+)`/).map {
                    String($0.output.1)
                }
            }
        )
        #expect(table.count >= 30, "\(table.sorted())")
        let alerts = try DeployFilesTests.read("deploy/prometheus/reclaim-alerts.yaml")
        let exprs =
            (try Yams.load(yaml: alerts) as? [String: Any]).map { root in
                (root["groups"] as? [[String: Any]] ?? []).flatMap { $0["rules"] as? [[String: Any]] ?? [] }.compactMap { $0["expr"] as? String }
            } ?? []
        #expect(exprs.count >= 10)
        let used = Set(
            exprs.joined(separator: "\n").matches(of: /\b(reclaim_[a-z0-9_]+|hb_requests[a-z_]*|http_server_[a-z_]+)\b/).map { String($0.output.1) }
        )
        for metric in used.sorted() {
            let base = ["_bucket", "_sum", "_count"].first { metric.hasSuffix($0) }.map { String(metric.dropLast($0.count)) } ?? metric
            #expect(table.contains(base) || table.contains(metric), "an alert uses \(metric), which docs/operations.md's metrics table does not list")
        }
    }

    // MARK: Paths

    /// Every Markdown file of the repository (not the build folders, the virtual environment or fetched packages).
    static func markdownFiles() throws -> [String] {
        let root = Binaries.repositoryRoot
        var found: [String] = []
        let skipped: Set<String> = [".build", ".git", ".venv", ".swiftpm", ".reclaim", "node_modules"]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey])
        while let url = enumerator?.nextObject() as? URL {
            if skipped.contains(url.lastPathComponent) || url.lastPathComponent.hasPrefix(".build") {
                enumerator?.skipDescendants()
                continue
            }
            if url.pathExtension == "md" { found.append(String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))) }
        }
        return found.sorted()
    }

    @Test("no document points outside the repository: no link that leaves it, no ../shared, no path of this machine")
    func pathsStayInside() throws {
        let root = Binaries.repositoryRoot.standardizedFileURL
        let files = try Self.markdownFiles()
        #expect(files.contains("docs/ios.md") && files.contains("Tests/Fixtures/apple-sandbox-notifications/README.md"), "\(files.count) files")
        for file in files {
            let text = try DeployFilesTests.read(file)
            let folder = root.appendingPathComponent(file).deletingLastPathComponent()
            for match in text.matches(of: /\]\(([^)\s#]+)[^)]*\)/) {
                let target = String(match.output.1)
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let resolved = folder.appendingPathComponent(target).standardizedFileURL.path
                #expect(resolved.hasPrefix(root.path + "/") || resolved == root.path, "\(file) links \(target), outside the repository")
            }
            for outside in ["../shared", "/work/", "/tmp/ci-run"] where text.contains(outside) {
                Issue.record("\(file) names \(outside), a path outside the repository")
            }
        }
    }
}
