import ArgumentParser
import Foundation
import ReclaimService

struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a subscription offer: StoreKit 1 signature (default) or StoreKit 2 compact JWS (--jws); prints JSON."
    )

    @Option(help: "The app's bundle id.") var bundleId: String
    @Option(help: "The subscription key's 10-character id.") var keyId: String
    @Option(help: "The subscription key (.p8 from App Store Connect; SEC1 PEM and DER also read).") var keyFile: String
    @Option(help: "Product identifier.") var product: String
    @Option(help: "Promotional offer identifier.") var offer: String
    @Option(help: "applicationUsername: the appAccountToken (UUID, rendered lowercase) or empty.") var applicationUsername: String = ""
    @Option(help: "Nonce (UUID); random by default.") var nonce: String?
    @Option(help: "Timestamp in UNIX milliseconds; now by default.") var timestamp: Int64?
    @Flag(help: "Make the StoreKit 2 promotional offer JWS instead.") var jws = false
    @Option(help: "App Store Connect issuer id (required with --jws).") var issuerId: String?

    func run() throws {
        do {
            print(
                try SignatureTasks.sign(
                    bundleId: bundleId,
                    keyId: keyId,
                    keyFile: keyFile,
                    product: product,
                    offer: offer,
                    applicationUsername: applicationUsername,
                    nonce: nonce,
                    timestampMillis: timestamp,
                    issuerId: issuerId,
                    jws: jws
                )
            )
        } catch {
            FileHandle.standardError.write(Data("reclaim sign: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
