import Foundation
import ReclaimService
import ReclaimStore
import ReclaimTestSupport
import Testing
import Yams

@testable import ReclaimDev

/// Each fact has one reference, held to the code here: config keys and their defaults in docs/configuration.md,
/// commands and their flags in docs/cli.md, routes in docs/http.md (beside openapi.yaml). Every other page links
/// to the reference rather than repeating it, and names only what Reclaim has: commands with their flags, routes,
/// files. README.md stays an entrance: under 10 KB, with the index of every page.
@Suite("Each fact has one reference, and the docs name only what Reclaim has", .poolWatchdog, .onTestThreads)
struct DocsContractTests {
    static func read(_ path: String) -> String { (try? DeployFilesTests.read(path)) ?? "" }
    static let readme = read("README.md")
    static let configuration = read("docs/configuration.md")
    static let cli = read("docs/cli.md")
    static let http = read("docs/http.md")

    /// The project's documentation: what these checks cover (CHANGELOG.md records history, and is left as it was).
    static var pages: [String] {
        ["README.md", "CONTRIBUTING.md", "deploy/README.md"] + ((try? DeployFilesTests.files(under: "docs", extensions: ["md"])) ?? [])
    }

    // MARK: Configuration: docs/configuration.md

    /// The rows of docs/configuration.md's key table, in order: the key with list markers dropped
    /// (`apps[].signingKeys[].keyId` → `apps.signingKeys.keyId`) and its default cell.
    static var keyTable: [(key: String, defaultCell: String)] {
        let table = configuration.components(separatedBy: "## Every key").dropFirst().first ?? ""
        return table.matches(of: /(?m)^\| `([A-Za-z.\[\]]+)` \|([^|]*)\|/).map {
            (String($0.output.1).replacingOccurrences(of: "[]", with: ""), String($0.output.2).trimmingCharacters(in: .whitespaces))
        }
    }

    /// docs/configuration.md's example file.
    static var configurationExample: String {
        configuration.firstMatch(of: /## The file[\s\S]*?```yaml\n([\s\S]*?)```/).map { String($0.output.1) } ?? ""
    }

    @Test("docs/configuration.md's table lists every key the code knows, once, and no other; its example loads and names every key")
    func configKeys() throws {
        let rows = Self.keyTable
        let documented = rows.map(\.key)
        #expect(rows.count >= 80, "\(rows.count) rows")
        #expect(
            Set(documented).count == documented.count,
            "listed twice: \(Dictionary(grouping: documented, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted())"
        )
        let known = ReclaimConfig.keyPaths
        #expect(known.subtracting(documented).isEmpty, "docs/configuration.md lacks \(known.subtracting(documented).sorted())")
        #expect(
            Set(documented).subtracting(known).isEmpty,
            "docs/configuration.md lists keys the code does not know: \(Set(documented).subtracting(known).sorted())"
        )
        for (key, cell) in rows where cell.isEmpty {
            // A section (`server`) has no default of its own; its keys have.
            #expect(documented.contains { $0.hasPrefix(key + ".") }, "\(key) has no default in docs/configuration.md")
        }
        #expect(!Self.configurationExample.isEmpty)
        _ = try ReclaimConfig.parse(yaml: Self.configurationExample, source: "docs/configuration.md")
        for path in known.sorted() {
            // The example's comments name the alternatives (serverAPI's keyId and file beside signingKey).
            let key = String(path.split(separator: ".").last ?? "")
            #expect(Self.configurationExample.contains("\(key):"), "docs/configuration.md's example lacks \(path)")
        }
    }

    @Test("docs/configuration.md's since column is the code's table of releases (ReclaimConfig.keyReleases), for every key")
    func keySince() throws {
        let table = Self.configuration.components(separatedBy: "## Every key").dropFirst().first ?? ""
        #expect(table.contains("| key | default | since | meaning |"))
        let rows = table.matches(of: /(?m)^\| `([A-Za-z.\[\]]+)` \|[^|]*\| ([^|]*) \|/).map {
            (String($0.output.1).replacingOccurrences(of: "[]", with: ""), String($0.output.2))
        }
        #expect(rows.count == Self.keyTable.count, "a row without a since cell")
        let known = ReclaimConfig.keyPaths
        #expect(Set(ReclaimConfig.keyReleases.keys).subtracting(known).isEmpty, "keyReleases names keys the code does not know")
        // A release named must exist by the time it is named: the newest release or an earlier one; "unreleased" only
        // while CHANGELOG.md lists unreleased changes (a release's commit names its own version instead).
        let current = ReclaimVersion.current
        let release = current.split(separator: "+").first.map(String.init) ?? current
        func number(_ version: String) -> [Int] { version.split(separator: ".").compactMap { Int($0) } }
        for (key, cell) in rows {
            let expected = ReclaimConfig.keyReleases[key] ?? "1.0.0"
            #expect(cell == expected, "docs/configuration.md says \(key) since \(cell); ReclaimConfig.keyReleases: \(expected)")
            if cell == "unreleased" {
                #expect(current.hasSuffix("+unreleased"), "\(key) is marked unreleased on the release commit of \(current)")
            } else {
                #expect(
                    number(cell).count == 3 && number(cell).lexicographicallyPrecedes(number(release)) || cell == release,
                    "\(key): \(cell) is after \(current)"
                )
            }
        }
    }

    /// A default as the table writes it and the code holds it: durations compared by their seconds.
    enum Default: Equatable, CustomStringConvertible {
        case text(String)
        case seconds(Int64)
        var description: String {
            switch self {
            case .text(let text): text
            case .seconds(let seconds): "\(seconds)s"
            }
        }
    }

    /// What the code gives each key it defaults, by walking a parsed config (nil optionals have no default; values
    /// the YAML gave are not defaults, the caller drops them).
    static func codeDefaults(of value: Any, at prefix: String, into defaults: inout [String: Default]) {
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else { continue }
            let path = prefix.isEmpty ? label : prefix + "." + label
            let mirror = Mirror(reflecting: child.value)
            if mirror.displayStyle == .optional, mirror.children.isEmpty { continue }
            let value = mirror.displayStyle == .optional ? mirror.children.first!.value : child.value
            switch value {
            case let duration as ConfigDuration: defaults[path] = .seconds(duration.seconds)
            case let number as Int: defaults[path] = .text("\(number)")
            case let flag as Bool: defaults[path] = .text("\(flag)")
            case let texts as [String]: defaults[path] = .text("[" + texts.joined(separator: ", ") + "]")
            case let map as [String: String] where map.isEmpty: defaults[path] = .text("{}")
            case let choice as any RawRepresentable where choice.rawValue is String: defaults[path] = .text("\(choice.rawValue)")
            default:
                let inner = Mirror(reflecting: value)
                if inner.displayStyle == .collection {
                    if inner.children.isEmpty { defaults[path] = .text("[]") }
                    for element in inner.children { codeDefaults(of: element.value, at: path, into: &defaults) }
                } else if inner.displayStyle == .struct {
                    codeDefaults(of: value, at: path, into: &defaults)
                }
            }
        }
    }

    @Test("every default docs/configuration.md gives is the code's, and every key the code defaults has its default written")
    func configDefaults() throws {
        // The least a config can say: what it says is required, not a default; everything else is defaulted.
        let minimal = """
            apps:
              - bundleId: com.example.app
                appAppleId: 1
                issuerId: 00000000-0000-0000-0000-000000000000
                signingKeys: [{ keyId: ABCDEFGHIJ, file: /nonexistent/key.p8 }]
                forwarding: [{ url: "https://forward.example.com/apple" }]
                webhooks: [{ url: "https://hooks.example.com/reclaim", secretFile: /nonexistent/secret }]
            campaigns:
              - { id: one, app: com.example.app, trigger: EXPIRED, offer: { productId: p, offerIdentifier: o } }
              - { id: two, app: com.example.app, trigger: EXPIRED, variants: [{ id: v, offer: { productId: p, offerIdentifier: o } }] }
            """
        let config = try ReclaimConfig.parse(yaml: minimal, source: "minimal")
        let given = try DeployFilesTests.keyPaths(try DeployFilesTests.yaml(minimal))
        var defaults: [String: Default] = [:]
        Self.codeDefaults(of: config, at: "", into: &defaults)
        for key in given { defaults[key] = nil }
        let cells = Dictionary(Self.keyTable.map { ($0.key, $0.defaultCell) }, uniquingKeysWith: { first, _ in first })
        #expect(defaults.count >= 40, "\(defaults.keys.sorted())")
        for (key, value) in defaults.sorted(by: { $0.key < $1.key }) {
            let cell = try #require(cells[key], "docs/configuration.md lacks \(key), which defaults to \(value)")
            if key == "worker.concurrency" {
                #expect(cell.contains("cores"), "worker.concurrency defaults to the machine's cores: \(cell)")
                continue
            }
            guard let written = cell.firstMatch(of: /^`([^`]*)`/).map({ String($0.output.1) }) else {
                Issue.record("docs/configuration.md gives \(key) no default value (the code's: \(value)): \(cell)")
                continue
            }
            let documented: Default? =
                switch value {
                case .seconds: (try? ConfigDuration(parsing: written)).map { .seconds($0.seconds) }
                case .text: .text(written)
                }
            #expect(documented == value, "docs/configuration.md: \(key) defaults to `\(written)`; the code to \(value)")
        }
        // The other way: a default written as a value is one the code has (what the minimal config gave aside).
        for (key, cell) in Self.keyTable where !given.contains(key) {
            guard let written = cell.firstMatch(of: /^`([^`]*)`/).map({ String($0.output.1) }) else { continue }
            #expect(defaults[key] != nil, "docs/configuration.md gives \(key) the default `\(written)`, which the code does not have")
        }
    }

    // MARK: Commands: docs/cli.md

    /// Every `reclaim …` command in backquotes of `text`, as its words and flags.
    static func commands(in text: String) -> [(words: [String], flags: [String])] {
        text.matches(of: /`(reclaim [^`]*)`/).map { match in
            let parts = match.output.1.split(whereSeparator: { " []|\n".contains($0) }).map(String.init).dropFirst()
            let words = Array(parts.prefix { $0.range(of: "^[a-z][a-z-]*$", options: .regularExpression) != nil })
            let flags = parts.filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "=" }) }
            return (words, flags)
        }
    }

    /// Every leaf command `reclaim --help` lists, as its words (`["apps", "create-key"]`).
    static func leafCommands(_ reclaim: String) async throws -> [[String]] {
        func subcommands(_ words: [String]) async throws -> [String] {
            let help = try await runProcess(reclaim, words + ["--help"]).output
            guard let list = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first else { return [] }
            return list.split(separator: "\n").compactMap { line in
                line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
            }.filter { $0 != "help" && $0 != "See" }
        }
        var commands: [[String]] = []
        for top in try await subcommands([]) {
            let group = try await subcommands([top])
            commands += group.isEmpty ? [[top]] : group.map { [top, $0] }
        }
        return commands
    }

    /// The options a command's `--help` lists, without `--help` and `--version`.
    static func flags(_ reclaim: String, _ words: [String]) async throws -> Set<String> {
        let help = try await runProcess(reclaim, words + ["--help"]).output
        return Set(help.matches(of: /(?m)^ +(?:-[a-z], )?(--[a-z][a-z-]*)/).map { String($0.output.1) }).subtracting(["--help", "--version"])
    }

    @Test("docs/configuration.md names the commands that need RECLAIM_CONFIG and those that read it when set: as their --help says")
    func configReaders() async throws {
        let reclaim = try Binaries.path("reclaim")
        var needs = Set<String>()
        var reads = Set<String>()
        for words in try await Self.leafCommands(reclaim) {
            // The help wraps its lines: words apart by any run of white space.
            let help = try await runProcess(reclaim, words + ["--help"]).output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let name = "reclaim " + words.joined(separator: " ")
            if help.contains("Configuration file (YAML), required") { needs.insert(name) }
            if help.contains("Configuration file (YAML), checked against when named") { reads.insert(name) }
        }
        #expect(needs.count >= 10 && reads.count >= 3, "\(needs) \(reads)")
        let row = try #require(Self.configuration.firstMatch(of: /(?m)^\| `RECLAIM_CONFIG` \|.*$/)).output
        let needed = try #require(row.firstMatch(of: /Needed by ([^;]*);/)).output.1
        let checked = try #require(row.firstMatch(of: /checked against when set by ([^.]*)\./)).output.1
        func named(_ text: Substring) -> Set<String> { Set(text.matches(of: /`(reclaim [a-z -]+)`/).map { String($0.output.1) }) }
        #expect(named(needed) == needs, "docs/configuration.md: needed by \(named(needed).sorted()); the commands: \(needs.sorted())")
        #expect(named(checked) == reads, "docs/configuration.md: checked when set by \(named(checked).sorted()); the commands: \(reads.sorted())")
    }

    @Test("every `reclaim --version` line a page quotes has the binary's form and the current schema")
    func versionQuotes() throws {
        var quotes = 0
        let release = ReclaimVersion.current.split(separator: "+").first.map(String.init) ?? ReclaimVersion.current
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            for match in text.matches(of: /(\d+\.\d+\.\d+)(\+unreleased)? \(commit [^,)]*, schema (\d+)([^)]*)\)/) {
                quotes += 1
                #expect(
                    Int(match.output.3) == Migrator.targetVersion,
                    "\(page) quotes schema \(match.output.3): the binary's is \(Migrator.targetVersion)"
                )
                #expect(
                    match.output.4.hasPrefix(", Package.resolved "),
                    "\(page) quotes --version without its Package.resolved hash: \(match.output.0)"
                )
                #expect(String(match.output.1) == release, "\(page) quotes --version of \(match.output.1): the binary is \(ReclaimVersion.current)")
            }
        }
        #expect(quotes >= 3)
    }

    /// What a command prints, rendered by the code that prints it, for the inputs a page's quote shows: a page marks a
    /// quote of a command's output with `<!-- output: NAME -->` on the line before its fenced block.
    static var outputs: [String: String] {
        var imported = Backfill.Counts()
        (imported.total, imported.seeded, imported.subscriptions, imported.notFound, imported.asked) = (400_000, 398_812, 401_230, 1_188, 400_000)
        var running = Backfill.Counts()
        (running.total, running.seeded, running.notFound, running.failed) = (400_000, 12_601, 40, 9)
        let variant = LiftStatistics(
            bundleId: "com.example.app",
            environment: "Production",
            campaignId: "winback-experiment",
            variantId: "fifty",
            treated: 412,
            heldOut: 97,
            redemptionRate: .init(value: 0.184, lower: 0.150, upper: 0.225),
            treatedRetention: .init(value: 0.311, lower: 0.268, upper: 0.357),
            heldOutRetention: .init(value: 0.227, lower: 0.155, upper: 0.320),
            retentionLift: .init(value: 0.084, lower: -0.018, upper: 0.169),
            verdict: "not yet distinguishable",
            neededPerGroup: 213
        )
        let tokens = AccountTokenBacklog.Counts(toSet: 1_204, excluded: 31, unreadable: 0)
        return [
            "set-tokens": tokens.line(app: "B", dryRun: false),
            "test-notification-reached": RecoveryTasks.reachedLine(notification: UUID().uuidString.lowercased(), storedAt: Date()),
            "dev-app-lines": DevEnvironment.appLines(
                Self.devApps([("com.acme.one", "ONEKEY0001"), ("com.acme.two", "TWOKEY0001")], keys: ["rk_app_XppqAz…", "rk_app_-k2xvh…"])
            ),
            "dev-storekit-app-line": DevEnvironment.appLines(
                Self.devApps([("com.acme.app", "BD3A7A04")], keys: ["rk_app_" + String(repeating: "x", count: 43)])
            ),
            "campaigns-report": CampaignTasks.reportText(environment: "Production", rows: [variant]),
            "backfill-summary": imported.summary(seconds: 8_400),
            "backfill-progress": "backfill: " + running.progress(firstDone: 0, seconds: 266.9),
            // A release's binary (between releases the same, with +unreleased after the version).
            "version":
                "\(ReclaimVersion.current.split(separator: "+")[0]) (commit 01ddfd7afbcdec0ee255f3668733ba90536c4974, schema \(Migrator.targetVersion), Package.resolved 2b73fb7edbbf)",
        ]
    }

    /// Apps as `reclaim dev` prints them: bundle ids and the key id signing for each.
    static func devApps(_ apps: [(bundleId: String, keyId: String)], keys: [String]) -> [(app: ReclaimConfig.App, key: String)] {
        let yaml =
            "apps:\n"
            + apps.map { "  - bundleId: \($0.bundleId)\n    environments: [Sandbox]\n    signingKeys: [{ keyId: \($0.keyId), file: /dev/null }]\n" }
            .joined()
        do {
            return zip(try ReclaimConfig.parse(yaml: yaml, source: "DocsContractTests").apps, keys).map { ($0, $1) }
        } catch {
            Issue.record("the apps of reclaim dev's lines: \(error)")
            return []
        }
    }

    @Test("every command output a page quotes (marked <!-- output: NAME -->) is what the code prints")
    func outputQuotes() throws {
        var used = Set<String>()
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            // A fenced block is the output exactly; a `span` is one line of it (its indentation aside), where `…` stands
            // for what varies.
            for marker in text.matches(of: /<!-- output: ([a-z-]+) -->(?:\n```\n([\s\S]*?)```|\s*`([^`]+)`)/) {
                let name = String(marker.output.1)
                used.insert(name)
                guard let expected = Self.outputs[name] else {
                    Issue.record("\(page) quotes output \(name), which DocsContractTests.outputs does not render")
                    continue
                }
                if let block = marker.output.2 {
                    #expect(String(block) == expected + "\n", "\(page) quotes \(name) as\n\(block)the code prints\n\(expected)")
                } else if let span = marker.output.3 {
                    let pattern = span.components(separatedBy: "…").map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: ".+?")
                    let matched = expected.split(separator: "\n").contains {
                        $0.trimmingCharacters(in: .whitespaces).range(of: "^" + pattern + "$", options: .regularExpression) != nil
                    }
                    #expect(matched, "\(page) quotes \(name) as `\(span)`; the code prints\n\(expected)")
                }
            }
        }
        #expect(used == Set(Self.outputs.keys), "rendered but quoted nowhere: \(Set(Self.outputs.keys).subtracting(used))")
    }

    @Test("every command the docs name exists with its flags")
    func commandsNamed() async throws {
        let reclaim = try Binaries.path("reclaim")
        let named = try Self.pages.flatMap { Self.commands(in: try DeployFilesTests.read($0)) }
        #expect(named.count >= 60)
        var checked = Set<String>()
        for (words, flags) in named where !words.isEmpty {
            let key = (words + flags).joined(separator: " ")
            guard checked.insert(key).inserted else { continue }
            let help = try await runProcess(reclaim, words + ["--help"])
            #expect(help.status == 0, "reclaim \(words.joined(separator: " ")) is not a command: \(help.errors)")
            for flag in flags where flag != "--help" {
                // The whole flag: `--notification` is not `--notifications`.
                let found = help.output.range(of: NSRegularExpression.escapedPattern(for: flag) + "(?![a-z-])", options: .regularExpression) != nil
                #expect(found, "reclaim \(words.joined(separator: " ")) has no \(flag)")
            }
        }
        #expect(try await runProcess(reclaim, ["--version"]).output.contains(ReclaimVersion.current))
    }

    @Test("docs/cli.md has a section for every command, whose synopsis lists exactly the command's flags; no other page lists commands")
    func commandReference() async throws {
        let reclaim = try Binaries.path("reclaim")
        // `### `reclaim apps create-key`` and the fenced synopsis under it.
        var synopses: [String: Set<String>] = [:]
        for match in Self.cli.matches(of: /(?m)^### `reclaim ([a-z -]+)`\n\n```\n(reclaim [^\n]*)\n```/) {
            let words = String(match.output.1)
            let line = String(match.output.2)
            #expect(line.hasPrefix("reclaim \(words)"), "docs/cli.md: the synopsis of reclaim \(words) is of another command: \(line)")
            synopses[words] = Set(line.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
        }
        let leaves = try await Self.leafCommands(reclaim)
        #expect(leaves.count >= 20, "\(leaves)")
        for words in leaves {
            let name = words.joined(separator: " ")
            guard let documented = synopses[name] else {
                Issue.record("docs/cli.md has no section `### `reclaim \(name)`` with its synopsis")
                continue
            }
            let actual = try await Self.flags(reclaim, words)
            #expect(
                documented == actual,
                "docs/cli.md, reclaim \(name): lacks \(actual.subtracting(documented).sorted()), names \(documented.subtracting(actual).sorted())"
            )
        }
        #expect(Set(synopses.keys).subtracting(leaves.map { $0.joined(separator: " ") }).isEmpty, "docs/cli.md documents commands that do not exist")
        #expect(Self.cli.contains("### `reclaim --version`"))
        // The one reference: no other page keeps a table or a section per command.
        for page in Self.pages where page != "docs/cli.md" {
            let text = try DeployFilesTests.read(page)
            let rows = text.matches(of: #/(?m)^\| `reclaim /#).count
            #expect(rows < 3, "\(page) has a table of commands: docs/cli.md is their reference")
            #expect(!text.contains("### `reclaim "), "\(page) has a section per command: docs/cli.md is their reference")
        }
    }

    // MARK: Routes: docs/http.md beside openapi.yaml

    /// Every route of openapi.yaml as `METHOD /path`.
    static func routes() throws -> Set<String> {
        let document = try #require(try DeployFilesTests.yaml(try DeployFilesTests.read("openapi.yaml")) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        return Set(
            paths.flatMap { path, operations in
                ((operations as? [String: Any]) ?? [:]).keys.filter { ["get", "post", "put", "patch", "delete"].contains($0) }.map {
                    "\($0.uppercased()) \(path)"
                }
            }
        )
    }

    @Test("docs/http.md describes every route of openapi.yaml; every route any page names is one of them; only docs/http.md tables them")
    func routesDocumented() throws {
        let routes = try Self.routes()
        #expect(routes.count >= 12, "\(routes.sorted())")
        for route in routes.sorted() {
            let found = Self.http.range(of: "`" + NSRegularExpression.escapedPattern(for: route) + "[`?]", options: .regularExpression) != nil
            #expect(found, "docs/http.md does not describe \(route)")
        }
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            for match in text.matches(of: /`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)/) {
                let route = "\(match.output.1) \(match.output.2)"
                #expect(routes.contains(route), "\(page) names \(route), which openapi.yaml does not have")
            }
            if page != "docs/http.md" {
                let rows = text.matches(of: #/(?m)^\| `(GET|POST) \//#).count
                #expect(rows < 3, "\(page) has a table of routes: docs/http.md is their reference")
            }
        }
    }

    // MARK: README.md and links

    /// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }.map { $0 == " " ? "-" : $0 })
    }

    /// The anchors of a Markdown text's headings, code blocks skipped (a `# comment` in YAML is no heading).
    static func anchors(of text: String) -> Set<String> {
        var inCode = false
        var found = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            if !inCode, let heading = line.firstMatch(of: /^#{1,6} (.+)$/) { found.insert(anchor(String(heading.output.1))) }
        }
        return found
    }

    @Test("a page's table of contents links every section (## headings, and every ### once it links one), in the page's order")
    func tablesOfContents() throws {
        var pagesWithOne = 0
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            guard let first = text.firstRange(of: #/(?m)^## /#) else { continue }
            let toc = text[..<first.lowerBound].split(separator: "\n").filter { $0.hasPrefix("- ") || $0.hasPrefix("  ") }
            let linked = toc.flatMap { $0.matches(of: /\]\(#([a-z0-9_-]+)\)/).map { String($0.output.1) } }
            guard linked.count >= 2 else { continue }
            pagesWithOne += 1
            var inCode = false
            var sections: [String] = []
            var subsections: [String] = []
            for line in text[first.lowerBound...].split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("```") { inCode.toggle() }
                if inCode { continue }
                if let heading = line.firstMatch(of: /^## (.+)$/) { sections.append(Self.anchor(String(heading.output.1))) }
                if let heading = line.firstMatch(of: /^### (.+)$/) { subsections.append(Self.anchor(String(heading.output.1))) }
            }
            let missing = sections.filter { !linked.contains($0) }
            #expect(missing.isEmpty, "\(page)'s table of contents lacks \(missing)")
            let order = linked.filter { sections.contains($0) }
            #expect(order == sections.filter { order.contains($0) }, "\(page)'s table of contents is not in the page's order: \(order)")
            if linked.contains(where: { subsections.contains($0) }) {
                let missingSub = subsections.filter { !linked.contains($0) }
                #expect(missingSub.isEmpty, "\(page)'s table of contents links subsections but not \(missingSub)")
            }
        }
        #expect(pagesWithOne >= 5)
    }

    @Test("a link labelled with a page and a heading (`[operations.md, \"API keys\"](operations.md#api-keys)`) leads to that heading")
    func labelledLinks() throws {
        var count = 0
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            for match in text.matches(of: /\[([A-Za-z0-9\/._-]+\.md), "([^"]+)"\]\([^)#]*#([^)]+)\)/) {
                count += 1
                let label = Self.anchor(String(match.output.2))
                #expect(String(match.output.3).hasPrefix(label), "\(page): \(match.output.0) names a heading its anchor is not")
            }
        }
        #expect(count >= 10)
    }

    @Test("every relative link of every page leads to a file, and every #anchor to a heading")
    func links() throws {
        let root = Binaries.repositoryRoot
        var checked = 0
        for page in Self.pages {
            let text = try DeployFilesTests.read(page)
            let base = URL(fileURLWithPath: page).deletingLastPathComponent().relativePath
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.output.1)
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let file = parts[0].isEmpty ? page : (base == "." ? parts[0] : base + "/" + parts[0])
                let url = root.appendingPathComponent(file).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: url.path), "\(page) links \(target), which does not exist")
                if parts.count == 2, url.pathExtension == "md", let linked = try? String(contentsOf: url, encoding: .utf8) {
                    #expect(Self.anchors(of: linked).contains(parts[1]), "\(page) links \(target): no such heading")
                }
                checked += 1
            }
        }
        #expect(checked >= 100, "\(checked) links")
    }

    @Test("README.md is an entrance: under 10 KB, the two commands, the demo, the app snippet, and an index of every page")
    func readme() throws {
        let size = Self.readme.utf8.count
        #expect(size > 2000 && size <= 10 * 1024, "README.md is \(size) bytes")
        #expect(Self.readme.contains("```sh\nscripts/test\n```"))
        #expect(Self.readme.contains("swift run reclaim dev --demo"))
        let snippet = Self.readme.firstMatch(of: /<!-- app-snippet -->\n```swift\n([\s\S]*?)```\n<!-- \/app-snippet -->/)
        #expect(snippet != nil, "README.md's app snippet, marked for the client's owners to keep current")
        // Everything else has its page: no configuration, no command table, no route table here.
        #expect(!Self.readme.contains("```yaml"), "the configuration is docs/configuration.md's")
        let pages = try DeployFilesTests.files(under: "docs", extensions: ["md"]).filter { !$0.hasPrefix("docs/decisions/") }
        #expect(pages.count >= 12, "\(pages)")
        for page in pages + ["CONTRIBUTING.md", "CHANGELOG.md", "openapi.yaml", "deploy/README.md", "docs/decisions/README.md"] {
            #expect(Self.readme.contains("](\(page))"), "README.md's index does not link \(page)")
        }
    }

    @Test("the README's run command installs what running needs, not the test tools; scripts/test adds those")
    func installDeps() async throws {
        let script = Binaries.repositoryRoot.appendingPathComponent("scripts/install-deps").path
        let running = Set(try await runProcess("/bin/bash", [script, "--list"]).output.split(whereSeparator: \.isWhitespace).map(String.init))
        let testing = Set(
            try await runProcess("/bin/bash", [script, "--test", "--list"]).output.split(whereSeparator: \.isWhitespace).map(String.init)
        )
        #expect(running.contains("postgresql"))
        for tool in ["chromium", "chromium-driver", "nodejs", "pip:selenium", "pip:schemathesis"] {
            #expect(!running.contains(tool), "running Reclaim does not need \(tool)")
            #expect(testing.contains(tool), "the tests need \(tool)")
        }
        #expect(Self.readme.contains("scripts/install-deps && swift run reclaim dev"))
        #expect(try DeployFilesTests.read("scripts/test").contains("scripts/install-deps --test"))
        #expect(try DeployFilesTests.read(".ci/run").contains("scripts/test"), "CI runs the README's test command")
        #expect(Self.readme.contains("brew install postgresql"), "what a macOS user runs instead")
    }
}
