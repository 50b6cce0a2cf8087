import Foundation
import ReclaimDomain
import X509

extension ReclaimConfig {
    /// The roots signed payloads must chain to: Apple Root CA - G3 for every app, plus each app's own
    /// `rootCertificates` (tests and private CAs) for that app only.
    public func rootTrust() throws -> RootTrust {
        var perApp: [RootTrust.AppRoots] = []
        for app in apps {
            var roots: [Certificate] = []
            for path in app.rootCertificates {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ConfigError("app \(app.bundleId): cannot read root certificate file \(path)")
                }
                do {
                    roots += try AppleJWSVerifier.certificates(fromPEM: String(decoding: data, as: UTF8.self))
                } catch {
                    throw ConfigError("app \(app.bundleId): \(path) holds no valid PEM certificate: \(error)")
                }
            }
            perApp.append(RootTrust.AppRoots(bundleId: app.bundleId, appAppleId: app.appAppleId, roots: roots))
        }
        return RootTrust(everyApp: [AppleJWSVerifier.appleRootCAG3], perApp: perApp)
    }

    /// The configured apps as the verifier's identity rules see them.
    public var appIdentities: [AppIdentity] {
        apps.map { AppIdentity(bundleId: $0.bundleId, appAppleId: $0.appAppleId, environments: Set($0.environments)) }
    }
}
