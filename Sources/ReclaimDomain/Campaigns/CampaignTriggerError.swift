/// A trigger that is not `TYPE` or `TYPE/SUBTYPE` of Apple's values.
public struct CampaignTriggerError: Error, CustomStringConvertible, Equatable {
    public let description: String
}
