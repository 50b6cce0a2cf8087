import Hummingbird
import Logging
import NIOCore

/// The request context of every Reclaim route: Hummingbird's basic context plus the
/// authenticated caller, set by the key middleware on routes that require one.
public struct ReclaimRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The bundle id an app key is bound to, or nil.
    public var appBundleId: String?
    /// The admin key id, when an admin key authenticated the request.
    public var adminKeyId: String?

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
