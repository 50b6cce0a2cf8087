import ArgumentParser
import Foundation
import ReclaimService
import ReclaimStore

#if canImport(Glibc)
import Glibc
#endif

struct ExtensionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extensions",
        abstract:
            "Make-goods through Apple: extend the renewal date of every active subscriber of a product (for one subscriber: POST /v1/grants, kind extension).",
        subcommands: [All.self]
    )

    struct All: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "all",
            abstract:
                "Apple's Extend Subscription Renewal Dates for All Active Subscribers, one product after another, each polled until Apple completes it.",
            discussion: """
                Apple takes hours or days; the status is asked every --poll-every (Apple allows one status call a second). \
                Stopped (Ctrl-C) or lost, run it again with the request id it printed (--request-id, one --product): Apple is \
                not asked twice and the polling goes on. Apple extends each subscription at most twice in 365 days and not \
                those in a free offer period, billing retry, a past grace period, expired, or family-shared; Apple's summary \
                notification (RENEWAL_EXTENSION/SUMMARY) is matched to the request, and the RENEWAL_EXTENDED notifications \
                that arrive meanwhile update state but trigger no campaign. Recorded in reclaim.mass_extensions.
                """
        )
        @Option(help: "The app's bundle id.") var app: String
        @Option(name: .customLong("product"), help: "A subscription product; repeat for several (one request each, in turn).") var products:
            [String] = []
        @Option(help: "Days to add: 1 to 90 (Apple's extendByDays).") var days: Int
        @Option(
            help:
                "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage (or those words: outage, satisfaction, other, undeclared)."
        )
        var reason: String
        @Option(help: "Why, for the record (e.g. \"the outage of 2026-11-20\").") var note: String
        @Option(name: .customLong("storefront"), help: "Only this storefront (three letters, e.g. USA); repeat for several. Default: all.")
        var storefronts: [String] = []
        @Option(help: "Production (default) or Sandbox.") var environment = "Production"
        @Option(help: "Apple's requestIdentifier: to resume a request already made (one --product). Default: a new UUID per product.")
        var requestId: String?
        @Option(help: "Between status calls, e.g. 60s or 5m.") var pollEvery = "60s"
        @Flag(help: "Ask Apple and return without waiting for completion.") var noWait = false
        @Option(help: "Who runs this, for the record (default RECLAIM_ACTOR, else the operating-system user).") var actor: String?
        @OptionGroup var configOptions: ConfigOptions
        @OptionGroup var database: DatabaseOptions

        static func reasonCode(_ text: String) -> Int? {
            switch text.lowercased() {
            case "0", "undeclared": 0
            case "1", "satisfaction", "customer-satisfaction": 1
            case "2", "other": 2
            case "3", "outage", "service-issue": 3
            default: nil
            }
        }

        func run() async throws {
            let logger = Bootstrap.logging()
            guard !products.isEmpty else { throw ValidationError("--product is required (repeat it for several products)") }
            guard let code = Self.reasonCode(reason) else {
                throw ValidationError("--reason \(reason): 0 (undeclared), 1 (satisfaction), 2 (other) or 3 (outage)")
            }
            guard let interval = try? ConfigDuration(parsing: pollEvery), interval.seconds >= 1 else {
                throw ValidationError("--poll-every \(pollEvery): a duration of at least 1s, such as 60s or 5m")
            }
            let terminal = isatty(STDOUT_FILENO) == 1
            let request = MassExtensions.Request(
                bundleId: app,
                environment: environment,
                productIds: products,
                extendByDays: days,
                extendReasonCode: code,
                storefrontCountryCodes: storefronts.isEmpty ? nil : storefronts,
                reason: note,
                requestIdentifier: requestId,
                actor: ExtensionTasks.actor(actor)
            )
            let outcomes: [MassExtensions.Outcome]
            do {
                outcomes = try await ExtensionTasks.extendAll(
                    request,
                    config: try configOptions.load(),
                    url: try database.resolved(),
                    wait: !noWait,
                    pollEvery: .seconds(interval.seconds),
                    logger: logger
                ) { progress in
                    let line = Self.line(progress.request, elapsed: progress.elapsed)
                    if terminal {
                        FileHandle.standardOutput.write(Data("\r\u{1B}[2K\(line)\(progress.done ? "\n" : "")".utf8))
                    } else {
                        print(line)
                    }
                }
            } catch let refused as MassExtensions.Refused {
                throw ValidationError(refused.description)
            }
            var failed = false
            for outcome in outcomes {
                switch outcome {
                case .complete(let done):
                    print(
                        "\(done.productId): complete, \(done.succeededCount ?? 0) extended by \(done.extendByDays) days, \(done.failedCount ?? 0) not (request id \(done.requestIdentifier))"
                    )
                case .accepted(let accepted):
                    print(
                        "\(accepted.productId): Apple is extending (request id \(accepted.requestIdentifier)); follow it with: reclaim extensions all --app \(app) --product \(accepted.productId) --days \(days) --reason \(code) --note … --request-id \(accepted.requestIdentifier)"
                    )
                case .refused(let refused):
                    failed = true
                    print("\(refused.productId): refused by Apple: \(refused.appleError ?? "") (request id \(refused.requestIdentifier))")
                }
            }
            if failed { throw ExitCode(1) }
        }

        /// `P (REQUEST_ID): Apple is extending; 1204 RENEWAL_EXTENDED received; 12m 3s` or, complete, Apple's counts.
        static func line(_ request: StoredMassExtension, elapsed: TimeInterval) -> String {
            let minutes = Int(elapsed) / 60
            let seconds = Int(elapsed) % 60
            let state =
                request.isComplete
                ? "complete: \(request.succeededCount ?? 0) extended, \(request.failedCount ?? 0) failed"
                : "Apple is extending"
            return
                "\(request.productId) (\(request.requestIdentifier)): \(state); \(request.extendedNotifications) RENEWAL_EXTENDED received; \(minutes)m \(seconds)s"
        }
    }
}
