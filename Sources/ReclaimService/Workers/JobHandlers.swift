import ReclaimStore

/// The job kinds this release handles, by kind.
public func jobHandlers(_ dependencies: Dependencies) -> [String: any JobHandler] {
    [
        NotificationStore.processJobKind: NotificationJobHandler(
            verifier: dependencies.verifier,
            engine: dependencies.campaignEngine,
            refunds: RefundRequests(config: dependencies.config, verifier: dependencies.verifier)
        ),
        CampaignFire.jobKind: CampaignFireJobHandler(engine: dependencies.campaignEngine),
        RefundRequests.jobKind: RefundAnswerJobHandler(dependencies: dependencies),
        ExtensionGrants.jobKind: RenewalExtensionJobHandler(dependencies: dependencies),
        AppAccountTokenStore.jobKind: AppAccountTokenJobHandler(dependencies: dependencies),
    ]
}
