import Foundation
import ReclaimStore

/// `/console/audit`: the audit log's newest entries (``AuditLog``), filtered by action, actor or target. Admin keys
/// only; the same rows as `reclaim audit`, which also verifies the chain.
struct ConsoleAuditPage {
    struct Row {
        let id: Int64
        let at: String
        let actor: String
        let action: String
        let target: String
        let outcome: String
        let detail: String
    }

    let title = "Reclaim console: audit log"
    let action: String
    let actor: String
    let target: String
    let rows: [Row]
    let isEmpty: Bool
    let message: String
    let hasMessage: Bool

    init(filter: AuditLog.Filter, rows: [AuditLog.Row], message: String? = nil) {
        action = filter.action ?? ""
        actor = filter.actor ?? ""
        // A subscriber's identifier is never echoed back once looked up: the field shows what was typed only when
        // it was no subscriber.
        target = filter.target.map { $0.hasPrefix("subscriber:") || AuditTasks.isSubscriberIdentifier($0) ? "" : $0 } ?? ""
        self.rows = rows.map { row in
            Row(
                id: row.id,
                at: row.at.formatted(.iso8601),
                actor: row.actor,
                action: row.action,
                target: row.target ?? "—",
                outcome: row.outcome,
                detail: row.detail ?? ""
            )
        }
        isEmpty = rows.isEmpty
        self.message = message ?? ""
        hasMessage = message != nil
    }

    static let template = """
        {{> layout-head}}
        <body>
        <header>
        <h1>Audit log</h1>
        <p><a href="/console">Back to the dashboard</a></p>
        <form class="inline" method="post" action="/console/logout"><button type="submit">Sign out</button></form>
        </header>
        <main>
        {{#hasMessage}}<p class="warn" role="alert">{{message}}</p>{{/hasMessage}}
        {{^hasMessage}}
        <section id="filter">
        <form method="get" action="/console/audit">
        <label>Action <input name="action" value="{{action}}" placeholder="campaign."></label>
        <label>Actor <input name="actor" value="{{actor}}"></label>
        <label>Target <input name="target" value="{{target}}" placeholder="campaign:ID or a transaction id"></label>
        <button type="submit">Filter</button>
        </form>
        <p class="note">Newest first, at most 200. <code>reclaim audit --verify</code> checks that no entry was changed or deleted.</p>
        </section>
        <section id="entries">
        {{^isEmpty}}<div class="scroll"><table data-table="audit">
        <thead><tr><th>#</th><th>at</th><th>actor</th><th>action</th><th>target</th><th>outcome</th><th>detail</th></tr></thead>
        <tbody>{{#rows}}<tr><td>{{id}}</td><td>{{at}}</td><td>{{actor}}</td><td>{{action}}</td><td>{{target}}</td><td>{{outcome}}</td><td>{{detail}}</td></tr>
        {{/rows}}</tbody></table></div>{{/isEmpty}}
        {{#isEmpty}}<p class="empty">No entries.</p>{{/isEmpty}}
        </section>
        {{/hasMessage}}
        </main>
        </body>
        </html>
        """
}
