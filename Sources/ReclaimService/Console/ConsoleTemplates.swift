import Mustache

/// The /console templates (swift-mustache; `{{x}}` is HTML-escaped, `{{{x}}}` only for SVG this module drew).
/// Kept in the binary like the schema, so a deployment is one file. No JavaScript: the page refreshes itself
/// with a meta tag, and a number's link opens the SQL below it (a closed `<details>` opens on its fragment).
enum ConsoleTemplates {
    static let library: MustacheLibrary = {
        do {
            return MustacheLibrary(templates: [
                "layout-head": try MustacheTemplate(string: head),
                "login": try MustacheTemplate(string: login),
                "page": try MustacheTemplate(string: page),
                "subscriber": try MustacheTemplate(string: ConsoleSubscriberPage.template),
                "subscriber-search": try MustacheTemplate(string: ConsoleSubscriberPage.search),
                "audit": try MustacheTemplate(string: ConsoleAuditPage.template),
            ])
        } catch {
            // The templates are constants of this file; ConsoleTests render both.
            fatalError("console templates do not parse: \(error)")
        }
    }()

    static let head = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        {{#refresh}}<meta http-equiv="refresh" content="{{refresh}}">{{/refresh}}
        <title>{{title}}</title>
        <link rel="icon" href="data:,">
        <style>
        :root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --bar: #2563eb; --bar2: #93c5fd; --warn: #b91c1c; }
        body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; }
        header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem 1rem; border-bottom: 1px solid var(--line); }
        header h1 { font-size: 1.3rem; margin: .2rem 0; }
        header p { color: var(--muted); margin: 0; flex: 1; }
        section { margin: 1.5rem 0; }
        h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .5rem; }
        .card { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem .75rem; }
        .card .label { color: var(--muted); font-size: .8rem; }
        .card .value { font-size: 1.4rem; font-weight: 600; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-size: .8rem; color: var(--muted); font-weight: 600; }
        td.num, th.num { text-align: right; }
        a.n { color: inherit; text-decoration: underline dotted; }
        .empty, .note { color: var(--muted); }
        .warn { color: var(--warn); }
        td.type { overflow-wrap: anywhere; }
        .error { overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: .85rem; }
        tr.failing td { background: #fdecea; }
        svg { max-width: 100%; height: auto; display: block; }
        svg text { font: 11px system-ui, sans-serif; fill: currentColor; }
        details { border: 1px solid var(--line); border-radius: .5rem; padding: .25rem .75rem; margin: .5rem 0; }
        details pre { overflow-x: auto; font-size: .8rem; }
        form.inline { display: inline; }
        button { font: inherit; padding: .3rem .8rem; }
        input[type=password], input[type=search], input[type=text] { font: inherit; padding: .4rem; width: min(100%, 32rem); box-sizing: border-box; }
        </style>
        </head>
        """

    static let login = """
        {{> layout-head}}
        <body>
        <header><h1>Reclaim console</h1></header>
        <main>
        <section id="sign-in">
        <h2>Sign in</h2>
        {{#message}}<p class="warn" role="alert">{{message}}</p>{{/message}}
        <form method="post" action="/console/session">
        <p><label for="key">An admin key (<code>reclaim admin create-key</code>) or a console key (<code>reclaim admin create-console-key</code>; <code>reclaim dev</code> prints one):</label></p>
        <p><input type="password" id="key" name="key" autocomplete="off" required autofocus></p>
        <p><button type="submit">Sign in</button></p>
        </form>
        <p class="note">The page only reads. A console key bound to one app shows that app's numbers only.</p>
        </section>
        </main>
        </body>
        </html>
        """

    static let page = """
        {{> layout-head}}
        <body>
        <header>
        <h1>Reclaim</h1>
        <p>{{scope}} · {{generatedAt}} UTC · refreshes every {{refresh}} s</p>
        <form class="inline" method="post" action="/console/logout"><button type="submit">Sign out</button></form>
        </header>
        <main>
        {{#isStopped}}
        <section id="stopped">
        {{#stops}}<p class="warn" role="alert">{{.}}: no offers, the cancel sheet answered {}, grants refused, refund answers held (<code>reclaim stop --resume</code>).</p>
        {{/stops}}
        </section>
        {{/isStopped}}

        <section id="notifications">
        <h2>Notifications received, last 24 hours</h2>
        <div class="cards">
        <div class="card"><div class="label">received</div><div class="value"><a class="n" href="#sql-notifications" data-metric="notifications.total">{{notificationsTotal}}</a></div></div>
        </div>
        {{{notificationsChart}}}
        {{#hasNotifications}}
        <div class="scroll"><table>
        <thead><tr><th>type / subtype</th><th class="num">notifications</th></tr></thead>
        <tbody>
        {{#notifications}}<tr><td class="type">{{type}}{{#hasSubtype}}<br><small class="note">{{subtype}}</small>{{/hasSubtype}}</td><td class="num"><a class="n" href="#sql-notifications" data-metric="notifications.{{type}}.{{subtype}}">{{count}}</a></td></tr>
        {{/notifications}}
        </tbody></table></div>
        {{/hasNotifications}}
        {{^notifications}}<p class="empty">No notifications in the last 24 hours.</p>{{/notifications}}
        </section>

        <section id="queue">
        <h2>Queue</h2>
        <div class="cards">
        {{#queue}}<div class="card"><div class="label">{{state}}</div><div class="value"><a class="n" href="#sql-queue" data-metric="queue.{{state}}">{{jobs}}</a></div></div>
        {{/queue}}
        <div class="card"><div class="label">oldest waiting job</div><div class="value"><a class="n" href="#sql-queue" data-metric="queue.oldest">{{oldestWaiting}}</a></div></div>
        </div>
        {{^queue}}<p class="empty">The queue is empty.</p>{{/queue}}
        </section>

        <section id="dead-jobs">
        <h2>Dead jobs</h2>
        <div class="cards"><div class="card"><div class="label">dead (newest 20 below)</div><div class="value"><a class="n" href="#sql-dead-jobs" data-metric="dead_jobs.count">{{deadJobsCount}}</a></div></div></div>
        {{#hasDeadJobs}}
        <div class="scroll"><table>
        <thead><tr><th>job</th><th>kind</th><th class="num">attempts</th><th>died</th><th>last error</th></tr></thead>
        <tbody>
        {{#deadJobs}}<tr><td>{{id}}</td><td>{{kind}}</td><td class="num">{{attempts}}</td><td>{{diedAt}}</td><td class="error">{{lastError}}</td></tr>
        {{/deadJobs}}
        </tbody></table></div>
        <p class="note">Requeue with <code>reclaim jobs dead --retry ID</code> or <code>--retry-all</code> once the cause is fixed.</p>
        {{/hasDeadJobs}}
        {{^deadJobs}}<p class="empty">No dead jobs.</p>{{/deadJobs}}
        </section>

        <section id="outbound">
        <h2>Forwarding and webhooks</h2>
        {{#hasTargets}}
        <div class="cards"><div class="card"><div class="label">failing targets</div><div class="value"><a class="n" href="#sql-outbound" data-metric="outbound.failing">{{failingTargets}}</a></div></div></div>
        <div class="scroll"><table>
        <thead><tr><th>target</th><th>state</th><th class="num">queued</th><th class="num">retrying</th><th class="num">dead</th><th>oldest</th><th>last error</th></tr></thead>
        <tbody>
        {{#targets}}<tr{{#failing}} class="failing"{{/failing}}><td>{{kind}} <small class="note">{{bundleId}}</small><br><small>{{url}}</small></td><td>{{state}}</td><td class="num">{{queued}}</td><td class="num">{{retrying}}</td><td class="num">{{dead}}</td><td>{{oldest}}</td><td class="error">{{lastError}}</td></tr>
        {{/targets}}
        </tbody></table></div>
        <p class="note">Retried with backoff for 72 hours, then dead. <code>reclaim webhooks pause URL</code> holds a target's messages (none lost) until <code>reclaim webhooks resume URL</code>.</p>
        {{/hasTargets}}
        {{^hasTargets}}<p class="empty">No forwarding targets or webhooks configured (apps[].forwarding, apps[].webhooks).</p>{{/hasTargets}}
        </section>

        <section id="campaigns">
        <h2>Campaigns: offers and lift against the holdout</h2>
        <p class="note" id="environment">{{environment}} only: <a href="?environment={{otherEnvironment}}#campaigns" data-environment="{{otherEnvironment}}">show {{otherEnvironment}}</a>. Sandbox is TestFlight and sandbox testers: never revenue.</p>
        {{#campaigns}}
        <h3>{{campaignId}} <small class="note">{{bundleId}}</small></h3>
        {{{funnelChart}}}
        <div class="scroll"><table>
        <thead><tr><th class="num">decided</th><th class="num">held out</th><th class="num">issued</th><th class="num">delivered</th><th class="num">shown</th><th class="num">redeemed</th></tr></thead>
        <tbody><tr>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.decided">{{decided}}</a></td>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.held_out">{{heldOut}}</a></td>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.offered">{{offered}}</a></td>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.delivered">{{delivered}}</a></td>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.shown">{{shown}}</a></td>
        <td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.redeemed">{{redeemed}}</a></td>
        </tr></tbody></table></div>
        <div class="scroll"><table>
        <thead><tr><th>group</th><th class="num">subscribers</th><th class="num">redeemed</th><th class="num">retained 30 days</th></tr></thead>
        <tbody>
        <tr><td>treated</td><td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.treated">{{treated}}</a></td><td class="num">{{treatedRedeemed}}</td><td class="num">{{treatedRetained}}</td></tr>
        <tr><td>held out</td><td class="num"><a class="n" href="#sql-campaigns" data-metric="campaign.{{campaignId}}.lift_held_out">{{liftHeldOut}}</a></td><td class="num">—</td><td class="num">{{heldOutRetained}}</td></tr>
        </tbody></table></div>
        <p class="note">Lift in 30-day retention: <strong>{{lift}}</strong></p>
        {{/campaigns}}
        {{^campaigns}}<p class="empty">No campaign has decided anything yet.</p>{{/campaigns}}
        </section>

        <section id="cancel-sheet">
        <h2>Cancel sheet: save rates against Apple's fallback</h2>
        <p class="note">{{environment}} only. A decision is saved or lost at the end of its campaign's saveWindow; the holdout was answered {}, so the lift is over Apple's own fallback.</p>
        {{#saveRates}}<p>{{text}}</p>
        {{/saveRates}}
        {{^saveRates}}<p class="empty">No cancel-sheet decision has been settled yet.</p>{{/saveRates}}
        <h3>Discounts by channel, last 30 days</h3>
        {{#hasDiscountChannels}}
        <div class="scroll"><table><thead><tr><th>app</th><th>channel</th><th class="num">redemptions</th></tr></thead><tbody>
        {{#discountChannels}}<tr><td>{{bundleId}}</td><td>{{channel}}</td><td class="num"><a class="n" href="#sql-discount-channels" data-metric="discounts.{{bundleId}}.{{channel}}">{{redemptions}}</a></td></tr>
        {{/discountChannels}}
        </tbody></table></div>
        {{/hasDiscountChannels}}
        {{^hasDiscountChannels}}<p class="empty">No discounted purchase in the last 30 days: Reclaim's offers, offer codes, Apple's win-back and App Store Connect's retention offers all count here.</p>{{/hasDiscountChannels}}
        </section>

        <section id="rejections">
        <h2>Refused inputs</h2>
        {{#showsRejections}}
        {{#hasRejectionsPerProblem}}
        <div class="cards">
        {{#rejectionsPerProblem}}<div class="card"><div class="label">{{problem}} (today and yesterday)</div><div class="value"><a class="n" href="#sql-rejections-per-problem" data-metric="rejections.{{problem}}">{{count}}</a></div></div>
        {{/rejectionsPerProblem}}
        </div>
        {{/hasRejectionsPerProblem}}
        {{#hasRejections}}
        <div class="scroll"><table>
        <thead><tr><th>when</th><th>endpoint</th><th>problem</th><th>reason</th></tr></thead>
        <tbody>
        {{#rejections}}<tr><td>{{receivedAt}}</td><td>{{endpoint}}</td><td>{{problem}}</td><td class="error">{{reason}}</td></tr>
        {{/rejections}}
        </tbody></table></div>
        {{/hasRejections}}
        {{^rejections}}<p class="empty">Nothing refused.</p>{{/rejections}}
        {{/showsRejections}}
        {{^showsRejections}}<p class="note">Shown to global keys only: a refused input names no app Reclaim could trust.</p>{{/showsRejections}}
        </section>

        {{#searchesSubscribers}}
        <section id="subscriber">
        {{> subscriber-search}}
        <p class="note">Admin, support and privacy keys only (each read is in the audit log): one subscriber's state, notifications, decisions (with their reasons), offers and what became of them.</p>
        </section>
        {{/searchesSubscribers}}

        {{#readsAudit}}
        <section id="audit">
        <h2>Audit log</h2>
        <p><a href="/console/audit">Who did what</a>: grants, pauses, erasures, keys, sign-ins (admin keys only).</p>
        </section>
        {{/readsAudit}}

        <section id="sql">
        <h2>The SQL behind every number</h2>
        <p class="note">The views are documented in docs/dashboards.md and in the database (<code>\\d+ reclaim.campaign_funnel</code>).</p>
        {{#queries}}<details id="{{id}}"><summary>{{source}}</summary><pre>{{sql}}</pre></details>
        {{/queries}}
        </section>
        </main>
        </body>
        </html>
        """
}
