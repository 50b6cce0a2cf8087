import Hummingbird
import Logging
import NIOCore

/// The request context of every Reclaim route (Hummingbird's basic context, under our own name so
/// that routes can grow per-request state without changing every signature).
public struct ReclaimRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
