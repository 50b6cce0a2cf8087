import Metrics
import ReclaimDomain
import ReclaimStore

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

    func issued(campaign: String) {
        Counter(label: "reclaim_offers_issued_total", dimensions: [("campaign", campaign)]).increment()
    }

    func delivered(_ offers: [StoredOffer]) {
        for offer in offers {
            Counter(label: "reclaim_offers_delivered_total", dimensions: [("campaign", offer.campaignId)]).increment()
        }
    }

    func expired(_ count: Int) {
        Counter(label: "reclaim_offers_expired_total").increment(by: count)
    }
}
