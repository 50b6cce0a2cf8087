import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The rules that read the subscriber's past decisions: cooldown and the maximum number of offers.
@Suite(.poolWatchdog) struct CampaignCooldownTests: CampaignFactories {
    struct CooldownCase: Sendable, CustomStringConvertible {
        var name: String
        var pastCampaign = "winback"
        var pastOutcome: CampaignDecision.Outcome
        /// Days before the event (t0) the earlier decision was triggered.
        var daysAgo: Double
        var expected: Expected
        var description: String { name }
    }

    /// Cooldown 30 days.
    @Test(arguments: [
        CooldownCase(name: "offered 10 days ago", pastOutcome: .offered, daysAgo: 10, expected: .skipped("cooldown")),
        CooldownCase(
            name: "offered a second less than the cooldown ago",
            pastOutcome: .offered,
            daysAgo: 30 - 1.0 / 86_400,
            expected: .skipped("cooldown")
        ),
        CooldownCase(name: "offered exactly the cooldown ago", pastOutcome: .offered, daysAgo: 30, expected: .offered()),
        CooldownCase(name: "offered 31 days ago", pastOutcome: .offered, daysAgo: 31, expected: .offered()),
        CooldownCase(name: "held out 10 days ago", pastOutcome: .heldOut, daysAgo: 10, expected: .skipped("cooldown")),
        CooldownCase(name: "held out 31 days ago", pastOutcome: .heldOut, daysAgo: 31, expected: .offered()),
        CooldownCase(name: "skipped 10 days ago", pastOutcome: .skipped, daysAgo: 10, expected: .offered()),
        CooldownCase(name: "skipped at the same time", pastOutcome: .skipped, daysAgo: 0, expected: .offered()),
        CooldownCase(name: "another campaign offered 10 days ago", pastCampaign: "other", pastOutcome: .offered, daysAgo: 10, expected: .offered()),
        CooldownCase(name: "another campaign held out 10 days ago", pastCampaign: "other", pastOutcome: .heldOut, daysAgo: 10, expected: .offered()),
    ])
    func cooldown(_ row: CooldownCase) throws {
        let history = OfferHistory(decisions: [past(row.pastCampaign, row.pastOutcome, at: Fixture.days(-row.daysAgo))])
        let decision = try decide(campaign("winback", cooldown: 30 * Fixture.day), history: history)
        row.expected.check(decision, "\(row.name)")
    }

    @Test func theLatestDecisionCountsForTheCooldown() throws {
        let history = OfferHistory(decisions: [
            past("winback", .offered, at: Fixture.days(-100)),
            past("winback", .heldOut, at: Fixture.days(-5)),
            past("winback", .offered, at: Fixture.days(-60)),
        ])
        let decision = try decide(campaign("winback", cooldown: 30 * Fixture.day), history: history)
        Expected.skipped("cooldown").check(decision)
        #expect(decision.reason.contains("30d"))
    }

    /// Decisions fed back into the history, as the worker does: a second trigger inside the cooldown is
    /// skipped, one after it is offered again.
    @Test(arguments: [CampaignDecision.Outcome.offered, .heldOut])
    func aSecondTriggerInsideTheCooldownIsSkipped(first: CampaignDecision.Outcome) throws {
        let winback = campaign("winback", cooldown: 30 * Fixture.day, holdoutPercent: first == .heldOut ? 100 : 0)
        var history = OfferHistory()
        func trigger(daysAfter days: Double) throws -> CampaignDecision {
            let at = Fixture.days(days)
            let decision = try decide(winback, state: state(lastSignedDate: at), event: event(at: at), history: history)
            history.decisions.append(past(decision.campaign.id, decision.outcome, at: at))
            return decision
        }
        Expected(outcome: first, word: first == .offered ? "eligible" : "held out").check(try trigger(daysAfter: 0))
        Expected.skipped("cooldown").check(try trigger(daysAfter: 5), "5 days later")
        Expected.skipped("cooldown").check(try trigger(daysAfter: 29), "29 days later")
        // The skipped decisions at days 5 and 29 do not restart the cooldown.
        Expected(outcome: first, word: first == .offered ? "eligible" : "held out").check(try trigger(daysAfter: 30), "30 days later")
        Expected.skipped("cooldown").check(try trigger(daysAfter: 40), "40 days later")
    }

    struct MaximumCase: Sendable, CustomStringConvertible {
        var maximum: Int?
        var offered: Int
        var heldOut = 0
        var skipped = 0
        var expected: Expected
        var description: String { "max \(maximum.map(String.init) ?? "none"), \(offered) offered, \(heldOut) held out, \(skipped) skipped" }
    }

    /// No cooldown, so only the maximum limits.
    @Test(arguments: [
        MaximumCase(maximum: nil, offered: 0, expected: .offered()),
        MaximumCase(maximum: nil, offered: 12, expected: .offered()),
        MaximumCase(maximum: 0, offered: 0, expected: .skipped("maximum")),
        MaximumCase(maximum: 1, offered: 0, expected: .offered()),
        MaximumCase(maximum: 1, offered: 1, expected: .skipped("maximum")),
        MaximumCase(maximum: 2, offered: 1, expected: .offered()),
        MaximumCase(maximum: 2, offered: 2, expected: .skipped("maximum")),
        MaximumCase(maximum: 2, offered: 3, expected: .skipped("maximum")),
        // Held-out and skipped decisions are not offers.
        MaximumCase(maximum: 1, offered: 0, heldOut: 3, expected: .offered()),
        MaximumCase(maximum: 1, offered: 0, skipped: 3, expected: .offered()),
        MaximumCase(maximum: 2, offered: 1, heldOut: 2, skipped: 2, expected: .offered()),
    ])
    func maxOffersPerSubscriber(_ row: MaximumCase) throws {
        var decisions: [OfferHistory.PastDecision] = []
        var daysAgo = 1.0
        for (outcome, count) in [(CampaignDecision.Outcome.offered, row.offered), (.heldOut, row.heldOut), (.skipped, row.skipped)] {
            for _ in 0..<count {
                decisions.append(past("winback", outcome, at: Fixture.days(-daysAgo)))
                daysAgo += 40
            }
        }
        // Offers of another campaign never count.
        decisions.append(past("other", .offered, at: Fixture.days(-3)))
        let limited = campaign("winback", cooldown: 0, maxOffersPerSubscriber: row.maximum)
        let decision = try decide(limited, history: OfferHistory(decisions: decisions))
        row.expected.check(decision, "\(row)")
    }
}
