import Foundation
import ReclaimDomain
import ReclaimStore

/// A forwarding target or webhook as the sender uses it: the mirrored row, its limits and, for a webhook, the
/// secrets that sign (the current one first; two during a rotation).
public struct OutboundTarget: Sendable {
    public var row: OutboundStore.Target
    public var timeout: Duration
    public var headers: [(name: String, value: String)]
    var secrets: [WebhookSecret]

    public var id: String { row.id }
    public var isWebhook: Bool { row.kind == OutboundStore.webhookJobKind }
    /// The URL's host as written (an IPv6 literal in brackets).
    public var host: String { URLComponents(string: row.url)?.host ?? "" }
    /// The URL without query or user info: what logs, metrics and the console show.
    public var shownURL: String { OutboundURL.redacted(row.url) }
}
