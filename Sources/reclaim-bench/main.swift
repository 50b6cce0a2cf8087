import Foundation

// reclaim-bench: the programs behind `scripts/bench NAME` (run in release) and the worker
// processes the queue's crash test kills. Each mode prints its figures as JSON on its last line.

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else {
    FileHandle.standardError.write(Data("usage: reclaim-bench sign|verify DIR|queue|queue-worker|ingest-bodies|pg-start DIR|pg-stop DIR …\n".utf8))
    exit(2)
}
let options = BenchOptions(Array(arguments.dropFirst()))

do {
    switch mode {
    case "pg-start": try PostgresBench.start(root: options.positional(0))
    case "pg-stop": try PostgresBench.stop(root: options.positional(0))
    case "sign":
        let result = try SignBenchmark.run(seconds: options.double("seconds", default: 3))
        print("sign: \(result.count) StoreKit 1 signatures")
        printFigures(["per_s": Int(result.perSecond)])
    case "verify": try await VerifyBenchmark.run(options)
    case "queue": try await QueueBenchmark.run(options)
    case "ingest-bodies": try IngestBodies.run(options)
    case "queue-worker": try await QueueBenchmark.worker(options)
    default:
        FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("reclaim-bench \(mode): \(error)\n".utf8))
    exit(1)
}
