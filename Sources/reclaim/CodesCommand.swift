import ArgumentParser
import Foundation
import ReclaimDomain
import ReclaimService

struct CodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codes",
        abstract: "One-time-use offer codes from App Store Connect: import a pool, and each pool's counts.",
        subcommands: [Import.self, Status.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract:
                "Import a file of one-time-use codes (as App Store Connect downloads them) into the pool of one offer; idempotent. Prints counts, never a code."
        )
        @Option(help: "The app's bundle id.") var app: String
        @Option(help: "The offer-code offer's reference name in App Store Connect (what campaigns name in offer.offerCodes).") var offer: String
        @Option(help: "The subscription product of the offer.") var product: String
        @Option(help: "The offer's customer eligibility in App Store Connect: new, existing, expired, or several comma-separated.")
        var eligibility: String
        @Option(help: "Production (default) or Sandbox.") var environment = "Production"
        @Option(help: "When the codes expire (ISO 8601 date or time); default six months from now, Apple's longest.") var expires: String?
        @Option(help: "The redemption URL, {code} for the code; default Apple's form with the config's appAppleId.") var redemptionUrl: String?
        @Argument(help: "The file App Store Connect downloaded: one code per line, or a CSV whose first column is the code.") var file: String
        @OptionGroup var config: OptionalConfigOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let kinds = OfferCodes.Eligibility.parse(eligibility) else {
                throw ValidationError("--eligibility must be new, existing, expired, or several of them comma-separated")
            }
            var expiresAt = Calendar(identifier: .gregorian).date(byAdding: .month, value: 6, to: Date())!
            if let expires {
                guard let date = (try? Date(expires, strategy: .iso8601)) ?? (try? Date(expires + "T00:00:00Z", strategy: .iso8601)) else {
                    throw ValidationError("--expires must be an ISO 8601 date or time such as 2027-05-01")
                }
                expiresAt = date
            } else {
                FileHandle.standardError.write(
                    Data("warning: no --expires: the codes are taken to expire six months from now; give the date App Store Connect shows\n".utf8)
                )
            }
            let request = CodeTasks.ImportRequest(
                bundleId: app,
                environment: environment,
                offer: offer,
                productId: product,
                eligibility: kinds,
                expiresAt: expiresAt,
                redemptionURL: redemptionUrl,
                file: file
            )
            print(
                try await CodeTasks.importCodes(request, config: try config.loadIfNamed(), url: try database.resolved(), logger: Bootstrap.logging())
            )
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Each pool's unused, issued, redeemed and expired codes, its next expiry, and redemptions of its offer without a code from Reclaim."
        )
        @Flag(help: "JSON instead of text.") var json = false
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            print(try await CodeTasks.status(json: json, url: try database.resolved(), logger: Bootstrap.logging()))
        }
    }
}
