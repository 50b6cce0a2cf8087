/// The App Store environment a payload comes from; unknown values are kept as they are.
public struct AppStoreEnvironment: AppleStringValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production: Self = "Production"
    public static let sandbox: Self = "Sandbox"
    public static let xcode: Self = "Xcode"
    public static let localTesting: Self = "LocalTesting"
}
