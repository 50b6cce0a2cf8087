import Crypto
import Foundation
import ReclaimDomain
import ReclaimTestSupport
import SwiftASN1
import Testing
import X509

@Suite(.poolWatchdog) struct AppleRootCertificateTests {
    @Test func bundledRootHasApplesPublishedFingerprint() throws {
        let document = try PEMDocument(pemString: AppleRootCertificates.appleRootCAG3PEM)
        let fingerprint = SHA256.hash(data: Data(document.derBytes))
            .map { String(format: "%02X", $0) }
            .joined(separator: ":")
        #expect(fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
    }

    @Test func parsedRootIsAppleRootCAG3() throws {
        let root = AppleJWSVerifier.appleRootCAG3
        #expect(root.subject.description.contains("CN=Apple Root CA - G3"))
        #expect(root.subject == root.issuer)
        let verifier = AppleJWSVerifier()
        #expect(verifier.trustedRoots == [root])
    }

    @Test func rootsParseFromPEMWithSeveralCertificates() throws {
        let ca = try TestCertificateAuthority()
        let pem = AppleRootCertificates.appleRootCAG3PEM + "\n" + (try ca.root.serializeAsPEM().pemString) + "\n"
        let roots = try AppleJWSVerifier.certificates(fromPEM: pem)
        #expect(roots == [AppleJWSVerifier.appleRootCAG3, ca.root])
    }
}
