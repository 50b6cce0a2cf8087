import Foundation
import ReclaimFuzzTargets
import ReclaimTestSupport
import Testing

/// Every input kept for the libFuzzer targets (`Fuzz/corpus`) and every input that once crashed or misled one
/// (`Fuzz/regressions`: the console cookie and the grant duration of issue 26 among them) replayed through the same
/// target functions `scripts/fuzz` drives. A trap here ends the test run, which is the failure.
@Suite("Fuzz corpus and regression seeds replay without a crash", .poolWatchdog)
struct FuzzSeedTests {
    static let fuzzDirectory: URL? = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("Fuzz/corpus")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate.deletingLastPathComponent() }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }()

    static func inputs(_ kind: String, _ target: FuzzTarget) throws -> [(String, [UInt8])] {
        let directory = try #require(fuzzDirectory).appendingPathComponent("\(kind)/\(target.rawValue)")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return try names.sorted().map { name in (name, Array(try Data(contentsOf: directory.appendingPathComponent(name)))) }
    }

    @Test("each target has a corpus, and every seed replays", arguments: FuzzTarget.allCases)
    func replay(target: FuzzTarget) async throws {
        let corpus = try Self.inputs("corpus", target)
        #expect(!corpus.isEmpty, "Fuzz/corpus/\(target.rawValue) holds no seed")
        for (_, bytes) in corpus + (try Self.inputs("regressions", target)) { await target.run(bytes) }
    }

    @Test("the regression seeds of issue 26 are kept")
    func issue26Seeds() throws {
        let cookies = try Self.inputs("regressions", .consoleCookie).map { String(decoding: $0.1, as: UTF8.self) }
        #expect(cookies.contains("00000000-0000-0000-0000-000000000000.9223372036854775807.AA"))
        let grants = try Self.inputs("regressions", .grantRequest).map { String(decoding: $0.1, as: UTF8.self) }
        #expect(grants.contains { $0.contains("106751991167301d") })
    }
}
