import Foundation
import ReclaimDomain
import ReclaimTestSupport
import SwiftASN1
import X509

/// A temporary folder with what a test app's config names: the test CA's root (`root.pem`) and, with `keyId`, a fresh
/// subscription key (`key.p8`); removed by ``remove()``.
struct TestAppFiles {
    let directory: URL

    init(ca: TestCertificateAuthority, keyId: String? = nil, prefix: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ca.root.serializeAsPEM().pemString.write(to: directory.appendingPathComponent("root.pem"), atomically: true, encoding: .utf8)
        if let keyId {
            try SigningKey.generate(keyId: keyId).pkcs8PEM.write(to: directory.appendingPathComponent("key.p8"), atomically: true, encoding: .utf8)
        }
    }

    /// The config's lines for an app that trusts the CA (and signs with the key, when there is one), indented as a
    /// list item under `apps:`.
    func app(_ bundleId: String, keyId: String? = nil) -> String {
        var lines = [
            "  - bundleId: \(bundleId)", "    appAppleId: 1234567890", "    environments: [Sandbox]",
            "    rootCertificates: [\(directory.path)/root.pem]",
        ]
        if let keyId {
            lines += [
                "    issuerId: 11111111-2222-3333-4444-555555555555", "    signingKeys: [{keyId: \(keyId), file: \(directory.path)/key.p8}]",
            ]
        }
        return lines.joined(separator: "\n")
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
