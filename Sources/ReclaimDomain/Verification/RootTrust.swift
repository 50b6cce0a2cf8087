import Crypto
import Foundation
import SwiftASN1
import X509

/// Which roots a payload may chain to: roots trusted for every app (Apple Root CA - G3), and roots an operator
/// configured for one app only (a test or private CA). A root configured for app A never vouches for app B,
/// Production payloads included.
public struct RootTrust: Sendable {
    /// Every root, for building chains; which app a root may vouch for is decided after the signature verified.
    public let anchors: [Certificate]
    private let everyApp: Set<Data>
    private let byBundleId: [String: Set<Data>]
    private let byAppAppleId: [Int64: Set<Data>]

    /// An app's own extra roots.
    public struct AppRoots: Sendable {
        public var bundleId: String
        public var appAppleId: Int64?
        public var roots: [Certificate]

        public init(bundleId: String, appAppleId: Int64?, roots: [Certificate]) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.roots = roots
        }
    }

    public init(everyApp: [Certificate], perApp: [AppRoots] = []) {
        var anchors = everyApp
        var byBundleId: [String: Set<Data>] = [:]
        var byAppAppleId: [Int64: Set<Data>] = [:]
        for app in perApp {
            anchors += app.roots
            let fingerprints = Set(app.roots.map(Self.fingerprint))
            byBundleId[app.bundleId, default: []].formUnion(fingerprints)
            if let appAppleId = app.appAppleId { byAppAppleId[appAppleId, default: []].formUnion(fingerprints) }
        }
        self.anchors = anchors
        self.everyApp = Set(everyApp.map(Self.fingerprint))
        self.byBundleId = byBundleId
        self.byAppAppleId = byAppAppleId
    }

    /// Whether a chain ending in the root with this fingerprint may vouch for a payload of the app it names: by
    /// its bundleId, or, for payloads without one (the realtime retention request), by its appAppleId.
    public func allows(_ anchor: Data, bundleId: String?, appAppleId: Int64?) -> Bool {
        if everyApp.contains(anchor) { return true }
        if let bundleId { return byBundleId[bundleId]?.contains(anchor) == true }
        if let appAppleId { return byAppAppleId[appAppleId]?.contains(anchor) == true }
        return false
    }

    /// SHA-256 of the certificate's DER.
    public static func fingerprint(_ certificate: Certificate) -> Data {
        var serializer = DER.Serializer()
        try? serializer.serialize(certificate)
        return Data(SHA256.hash(data: serializer.serializedBytes))
    }
}
