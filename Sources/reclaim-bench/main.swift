import Foundation
import ReclaimDomain

// reclaim-bench: the programs behind `scripts/bench NAME` (run in release) and the worker
// processes the queue's crash test kills. Each mode prints its figures as JSON on its last line.

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else {
    FileHandle.standardError.write(
        Data(
            "usage: reclaim-bench sign|verify DIR|queue|queue-worker|ingest-bodies|offer-key FILE|pg-start DIR [--track-commit-timestamp on]|pg-stop DIR|sink PORTFILE|apple-stand-in DIR [--rate N --latency-ms N] …\n"
                .utf8
        )
    )
    exit(2)
}
let options = BenchOptions(Array(arguments.dropFirst()))

do {
    switch mode {
    case "pg-start":
        try await PostgresBench.start(root: options.positional(0), trackCommitTimestamp: (try? options.string("track-commit-timestamp")) == "on")
    case "pg-stop": try await PostgresBench.stop(root: options.positional(0))
    case "sign":
        let result = try SignBenchmark.run(seconds: options.double("seconds", default: 3))
        print("sign: \(result.count) StoreKit 1 signatures")
        printFigures(["per_s": Int(result.perSecond)])
    case "verify": try await VerifyBenchmark.run(options)
    case "queue": try await QueueBenchmark.run(options)
    case "ingest-bodies": try IngestBodies.run(options)
    case "offer-key":
        // A fresh subscription key (.p8, PKCS#8 PEM like App Store Connect's) for the campaigns of
        // `scripts/bench e2e`: its workers sign real offers with it. The key id is the config's
        // business (`signingKeys`); the file holds only the key.
        try Data(SigningKey.generate(keyId: "BENCHKEY01").pkcs8PEM.utf8).write(to: URL(fileURLWithPath: try options.positional(0)), options: .atomic)
    case "queue-worker": try await QueueBenchmark.worker(options)
    case "sink": try await Sink.run(options)
    case "apple-stand-in": try await AppleStandIn.run(options)
    default:
        FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("reclaim-bench \(mode): \(error)\n".utf8))
    exit(1)
}
