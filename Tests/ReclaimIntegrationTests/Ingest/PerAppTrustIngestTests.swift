import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import ReclaimService
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite("Ingest trusts an app's extra root for that app only", .poolWatchdog)
struct PerAppTrustIngestTests {
    @Test("app A trusts a test root, app B does not: B's notification signed by A's root is 401 untrusted-certificate-chain")
    func otherAppsRootIsRefused() async throws {
        let ca = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reclaim-trust-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rootFile = directory.appendingPathComponent("root.pem")
        try ca.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
        let config = try ReclaimConfig.parse(
            yaml: """
                apps:
                  - bundleId: com.example.a
                    appAppleId: 1
                    environments: [Sandbox, Production]
                    rootCertificates: [\(rootFile.path)]
                  - bundleId: com.example.b
                    appAppleId: 2
                    environments: [Sandbox, Production]
                """
        )
        try await withTestDatabase { client, _ in
            let app = Application(router: buildRouter(try .test(postgres: client, config: config)))
            try await app.test(.router) { http in
                for (bundleId, appAppleId, environment, expected) in [
                    ("com.example.a", Int64(1), "Sandbox", HTTPResponse.Status.ok),
                    ("com.example.b", 2, "Sandbox", .unauthorized),
                    ("com.example.b", 2, "Production", .unauthorized),
                ] {
                    let body = try TestNotifications(ca: ca, bundleId: bundleId, environment: environment, appAppleId: appAppleId).body()
                    try await http.execute(
                        uri: "/v1/apple/notifications",
                        method: .post,
                        headers: [.contentType: "application/json"],
                        body: ByteBuffer(bytes: body)
                    ) { response in
                        #expect(response.status == expected, "\(bundleId) \(environment)")
                        if expected != .ok {
                            #expect(String(buffer: response.body).contains("urn:reclaim:problem:untrusted-certificate-chain"))
                        }
                    }
                }
            }
        }
    }
}
