import Foundation
import ReclaimDomain
import X509

extension ReclaimConfig {
    /// The roots signed payloads must chain to: Apple Root CA - G3, plus every PEM file the apps
    /// list under `rootCertificates` (tests and private CAs).
    public func trustedRoots() throws -> [Certificate] {
        var roots = [AppleJWSVerifier.appleRootCAG3]
        for path in Set(apps.flatMap(\.rootCertificates)).sorted() {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigError("cannot read root certificate file \(path)")
            }
            do {
                roots += try AppleJWSVerifier.certificates(fromPEM: String(decoding: data, as: UTF8.self))
            } catch {
                throw ConfigError("\(path) holds no valid PEM certificate: \(error)")
            }
        }
        return roots
    }

    /// The configured apps as the verifier's identity rules see them.
    public var appIdentities: [AppIdentity] {
        apps.map { AppIdentity(bundleId: $0.bundleId, appAppleId: $0.appAppleId, environments: Set($0.environments)) }
    }
}
