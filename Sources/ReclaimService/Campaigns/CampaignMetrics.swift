import Metrics
import ReclaimDomain

/// Campaign and offer metrics (swift-metrics; exported by /metrics).
struct CampaignMetrics: Sendable {
    func decided(_ decision: CampaignDecision) {
        Counter(label: "reclaim_campaign_decisions_total", dimensions: [("campaign", decision.campaign.id), ("outcome", decision.outcome.rawValue)])
            .increment()
    }

    func redeemed(campaign: String?) {
        Counter(label: "reclaim_offers_redeemed_total", dimensions: [("campaign", campaign ?? "not_issued_by_reclaim")]).increment()
    }

    func withdrawn() {
        Counter(label: "reclaim_offers_withdrawn_total").increment()
    }

    func signed(_ count: Int = 1, purpose: String) {
        Counter(label: "reclaim_offer_signatures_total", dimensions: [("purpose", purpose)]).increment(by: count)
    }

    func delivered(_ count: Int) {
        Counter(label: "reclaim_offers_delivered_total").increment(by: count)
    }

    func expired(_ count: Int) {
        Counter(label: "reclaim_offers_expired_total").increment(by: count)
    }
}
