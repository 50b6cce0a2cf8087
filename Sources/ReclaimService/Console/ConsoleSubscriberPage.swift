import Foundation
import ReclaimStore

/// `/console/subscriber`: one subscriber's story (``SubscriberStory``) for support, searched by either identifier.
/// Admin, support and privacy keys only: it shows one person's data, where the dashboard shows counts.
struct ConsoleSubscriberPage {
    /// A table of the story; every cell already text.
    struct Table {
        struct Row { let cells: [String] }
        let id: String
        let title: String
        let headers: [String]
        let rows: [Row]
        let isEmpty: Bool
    }

    struct Subscription {
        let heading: String
        let state: String
        let tables: [Table]
    }

    let title = "Reclaim console: subscriber"
    let query: String
    let app: String
    let message: String
    let hasMessage: Bool
    let searched: Bool
    let forgottenAt: String
    let isForgotten: Bool
    let subscriptions: [Subscription]
    let grantsWithoutSubscription: Table

    init(query: String, app: String, message: String? = nil, story: SubscriberStory?) {
        self.query = query
        self.app = app
        self.message = message ?? ""
        hasMessage = message != nil
        searched = story != nil
        forgottenAt = story?.forgottenAt ?? ""
        isForgotten = story?.forgottenAt != nil
        subscriptions = (story?.subscriptions ?? []).map(Self.subscription)
        grantsWithoutSubscription = Self.grants(story?.grantsWithoutSubscription ?? [], id: "grants-without-subscription")
    }

    static func table(_ id: String, _ title: String, _ headers: [String], _ rows: [[String?]]) -> Table {
        Table(id: id, title: title, headers: headers, rows: rows.map { Table.Row(cells: $0.map { $0 ?? "—" }) }, isEmpty: rows.isEmpty)
    }

    static func grants(_ grants: [SubscriberStory.Grant], id: String) -> Table {
        table(id, "Grants", ["created", "offer", "product", "reason"], grants.map { [$0.createdAt, $0.offerIdentifier, $0.productId, $0.reason] })
    }

    static func subscription(_ s: SubscriberStory.Subscription) -> Subscription {
        Subscription(
            heading: "\(s.originalTransactionId) · \(s.bundleId) · \(s.environment)",
            state: s.stateSummary,
            tables: [
                table(
                    "notifications",
                    "Notifications",
                    ["signed", "type", "subtype", "source"],
                    s.notifications.map { [$0.signedDate, $0.type, $0.subtype, $0.source] }
                ),
                table(
                    "decisions",
                    "Campaign decisions",
                    ["decided", "campaign", "outcome", "reason"],
                    s.decisions.map { [$0.decidedAt, $0.campaign + ($0.variant.map { " / \($0)" } ?? ""), $0.outcome, $0.reason] }
                ),
                table(
                    "offers",
                    "Offers",
                    ["created", "campaign", "offer", "state", "what became of it"],
                    s.offers.map { o in
                        var fate: [String] = []
                        if let delivered = o.deliveredAt { fate.append("delivered \(delivered) (\(o.deliveryCount)×)") }
                        if !o.events.isEmpty { fate.append("app: \(o.events.joined(separator: ", "))") }
                        if let redeemed = o.redeemedAt { fate.append("redeemed \(redeemed)") }
                        if let ended = o.endedAt { fate.append("ended \(ended)" + (o.endReason.map { ": \($0)" } ?? "")) }
                        if o.state == "ready" || o.state == "delivered" { fate.append("deliverable until \(o.deliverableUntil)") }
                        return [o.createdAt, o.campaign ?? "grant", "\(o.offerIdentifier) for \(o.productId)", o.state, fate.joined(separator: "; ")]
                    }
                ),
                table(
                    "cancel-sheet",
                    "Cancel-sheet decisions",
                    ["decided", "campaign", "outcome", "reason", "answer", "saved?"],
                    s.cancelSheetDecisions.map {
                        [$0.decidedAt, $0.campaign, $0.outcome + ($0.shadow ? " (shadow)" : ""), $0.reason, $0.answer, $0.saveOutcome]
                    }
                ),
                table(
                    "refunds",
                    "Refund requests",
                    ["requested", "arm", "policy", "status", "Apple's outcome", "customer's reason"],
                    s.refundRequests.map { [$0.requestedAt, $0.arm, $0.policy, $0.status, $0.outcome, $0.reason] }
                ),
                table(
                    "redemptions",
                    "Redemptions",
                    ["redeemed", "offer", "product", "price"],
                    s.redemptions.map { x in [x.redeemedAt, x.offerIdentifier, x.productId, x.price.map { "\($0) \(x.currency ?? "")" }] }
                ),
                grants(s.grants, id: "grants"),
            ]
        )
    }

    static let template = """
        {{> layout-head}}
        <body>
        <header>
        <h1>Subscriber</h1>
        <p><a href="/console">Back to the dashboard</a></p>
        <form class="inline" method="post" action="/console/logout"><button type="submit">Sign out</button></form>
        </header>
        <main>
        <section id="search">
        {{> subscriber-search}}
        {{#hasMessage}}<p class="warn" role="alert">{{message}}</p>{{/hasMessage}}
        </section>
        {{#searched}}
        <section id="subscriptions">
        {{#isForgotten}}<p class="note" id="forgotten">Forgotten on request on {{forgottenAt}} (<code>reclaim subscribers forget</code>): nothing about them is kept, and Apple's later notifications about them are dropped.</p>{{/isForgotten}}
        {{#subscriptions}}
        <h2>{{heading}}</h2>
        <p>{{state}}</p>
        {{#tables}}
        <h3>{{title}}</h3>
        {{^isEmpty}}<div class="scroll"><table data-table="{{id}}">
        <thead><tr>{{#headers}}<th>{{.}}</th>{{/headers}}</tr></thead>
        <tbody>{{#rows}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}</tr>
        {{/rows}}</tbody></table></div>{{/isEmpty}}
        {{#isEmpty}}<p class="empty">None.</p>{{/isEmpty}}
        {{/tables}}
        {{/subscriptions}}
        {{^subscriptions}}<p class="empty">No subscription found.</p>{{/subscriptions}}
        {{#grantsWithoutSubscription}}{{^isEmpty}}<h2>Grants naming no subscription found</h2>
        <div class="scroll"><table data-table="{{id}}">
        <thead><tr>{{#headers}}<th>{{.}}</th>{{/headers}}</tr></thead>
        <tbody>{{#rows}}<tr>{{#cells}}<td>{{.}}</td>{{/cells}}</tr>
        {{/rows}}</tbody></table></div>{{/isEmpty}}{{/grantsWithoutSubscription}}
        </section>
        {{/searched}}
        </main>
        </body>
        </html>
        """

    /// The search form, on this page and on the dashboard (for admin keys).
    static let search = """
        <h2>Look up a subscriber</h2>
        <form method="get" action="/console/subscriber">
        <p><label for="subscriber-id">Original transaction id or appAccountToken:</label></p>
        <p><input type="search" id="subscriber-id" name="id" value="{{query}}" autocomplete="off" required></p>
        <p><label for="subscriber-app">App (bundle id, optional):</label> <input type="text" id="subscriber-app" name="app" value="{{app}}" autocomplete="off"></p>
        <p><button type="submit">Show</button></p>
        </form>
        """
}
