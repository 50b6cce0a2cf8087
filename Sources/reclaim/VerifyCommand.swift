import ArgumentParser
import Foundation
import ReclaimService

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a signedPayload (notification, transaction, renewal info, realtime request) and print it decoded as JSON."
    )

    @Argument(help: "File holding the JWS or a {\"signedPayload\": …} body; - or nothing for standard input.") var file: String?
    @Option(name: .customLong("root"), help: "Extra trusted root certificate (PEM); repeatable. Apple Root CA - G3 is built in.")
    var roots: [String] = []
    @Option(help: "Require this bundle id.") var bundleId: String?
    @Option(help: "Require this environment (Production, Sandbox, …).") var environment: String?

    func run() async throws {
        let input: Data
        if let file, file != "-" {
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            input = data
        } else {
            input = FileHandle.standardInput.readDataToEndOfFile()
        }
        do {
            print(try await SignatureTasks.verify(input: input, rootFiles: roots, bundleId: bundleId, environment: environment))
        } catch {
            FileHandle.standardError.write(Data("reclaim verify: does not verify: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
