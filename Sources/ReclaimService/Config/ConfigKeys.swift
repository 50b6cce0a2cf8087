/// The keys a config mapping may have. A key the mapping holds but its type does not know is refused, with the
/// nearest known key: `holdoutPercentage: 10` used to be ignored, quietly turning the holdout off.
protocol ConfigKeys: CodingKey, CaseIterable {}

/// Any key a mapping holds, known or not.
private struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int? = nil
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// The unknown keys met while decoding one section, so that all of them are reported at once (a thrown error would
/// stop at the first). ``ReclaimConfig/parse(yaml:source:)`` passes one in the decoder's `userInfo`.
final class UnknownConfigKeys: @unchecked Sendable {
    static let userInfoKey = CodingUserInfoKey(rawValue: "reclaim.config.unknownKeys")!
    /// Each key's full coding path and what to say of it. Used by one synchronous decode at a time.
    private(set) var found: [(codingPath: [any CodingKey], message: String)] = []

    func record(_ codingPath: [any CodingKey], _ message: String) { found.append((codingPath, message)) }
}

extension Decoder {
    /// `container(keyedBy:)`, after finding every key of the mapping that `keys` does not name: recorded when the
    /// decoder carries ``UnknownConfigKeys``, thrown otherwise.
    func configContainer<Key: ConfigKeys>(keyedBy keys: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let known = Key.allCases.map(\.stringValue)
        for key in try container(keyedBy: AnyKey.self).allKeys where !known.contains(key.stringValue) {
            var message = "unknown key"
            if let nearest = ConfigKeySuggestion.nearest(to: key.stringValue, among: known) { message += "; did you mean `\(nearest)`?" }
            message += " (known here: \(known.joined(separator: ", ")))"
            guard let unknown = userInfo[UnknownConfigKeys.userInfoKey] as? UnknownConfigKeys else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath + [key], debugDescription: message))
            }
            unknown.record(codingPath + [key], message)
        }
        return try container(keyedBy: Key.self)
    }
}

/// The known key a mistyped one most likely meant.
enum ConfigKeySuggestion {
    /// The known key at the smallest edit distance (case ignored), if it is close enough to be a typo, or one key
    /// extends the other (`holdoutPercentage` for `holdoutPercent`).
    static func nearest(to key: String, among known: [String]) -> String? {
        let lower = key.lowercased()
        var best: (key: String, distance: Int)?
        for candidate in known {
            let other = candidate.lowercased()
            let distance = (lower.hasPrefix(other) || other.hasPrefix(lower)) ? 1 : editDistance(lower, other)
            if distance <= max(2, min(lower.count, other.count) / 3), distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.key
    }

    /// Levenshtein distance; keys are short, so the quadratic table is fine.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension ReclaimConfig {
    /// Every key the configuration knows, as a dotted path with list positions left out (`apps.signingKeys.keyId`):
    /// what docs/configuration.md's table must list, each once with its default (a test holds it to it).
    public static var keyPaths: Set<String> {
        var paths = Set<String>()
        func add<Key: ConfigKeys>(_ prefix: String, _ keys: Key.Type) {
            for key in Key.allCases { paths.insert(prefix.isEmpty ? key.stringValue : prefix + "." + key.stringValue) }
        }
        add("", CodingKeys.self)
        add("apps", App.CodingKeys.self)
        add("apps.signingKeys", SigningKeyFile.CodingKeys.self)
        add("apps.serverAPI", ServerAPI.CodingKeys.self)
        add("apps.discountBudget", DiscountBudgetKeys.CodingKeys.self)
        add("apps.refunds", Refunds.CodingKeys.self)
        add("apps.refunds.policies", Policy.CodingKeys.self)
        add("apps.refunds.policies.conditions", Conditions.CodingKeys.self)
        add("apps.retentionMessaging", RetentionMessaging.CodingKeys.self)
        add("apps.retentionMessaging.messages", Message.CodingKeys.self)
        add("apps.retentionMessaging.messages.image", Image.CodingKeys.self)
        add("apps.retentionMessaging.messages.bulletPoints", BulletPoint.CodingKeys.self)
        add("apps.retentionMessaging.messages.bulletPoints.image", Image.CodingKeys.self)
        add("apps.retentionMessaging.defaults", Default.CodingKeys.self)
        add("campaigns", Campaign.CodingKeys.self)
        add("campaigns.offer", Campaign.Offer.CodingKeys.self)
        add("campaigns.variants", Campaign.Variant.CodingKeys.self)
        add("campaigns.variants.offer", Campaign.Offer.CodingKeys.self)
        add("campaigns.switchTo", Campaign.SwitchTo.CodingKeys.self)
        add("campaigns.variants.switchTo", Campaign.SwitchTo.CodingKeys.self)
        add("campaigns.conditions", Campaign.ConfigConditions.CodingKeys.self)
        add("server", Server.CodingKeys.self)
        add("worker", Worker.CodingKeys.self)
        add("offers", Offers.CodingKeys.self)
        add("reconciliation", Reconciliation.CodingKeys.self)
        add("database", DatabaseSettings.CodingKeys.self)
        add("apps.forwarding", ForwardingTarget.CodingKeys.self)
        add("apps.webhooks", Webhook.CodingKeys.self)
        add("forwarding", Forwarding.CodingKeys.self)
        return paths
    }
}
