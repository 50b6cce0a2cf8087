import Hummingbird
import Logging
import NIOCore

/// The request context of every Reclaim route: Hummingbird's basic context, the connection's channel so that a
/// route can end a connection that misbehaves (see ``closeSoon()``), and the authenticated caller.
public struct ReclaimRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// Set by ``KeyAuthenticator`` on the routes it guards.
    var caller: Caller?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// Closes the connection shortly after the answer now being prepared was sent. After a 413 Hummingbird reads
    /// and discards the rest of the body to reuse the connection: for a chunked body without end that is
    /// gigabytes. A second is enough for the client to read the answer; then the connection goes.
    func closeSoon(after delay: TimeAmount = .seconds(1)) {
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
    }
}
