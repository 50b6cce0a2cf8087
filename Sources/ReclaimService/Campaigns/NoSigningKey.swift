/// A campaign for an app without a signing key (the config check refuses this; kept for a config changed
/// under a running process).
struct NoSigningKey: Error, CustomStringConvertible {
    let bundleId: String
    var description: String { "app \(bundleId) has no signing key to sign offers with" }
}
