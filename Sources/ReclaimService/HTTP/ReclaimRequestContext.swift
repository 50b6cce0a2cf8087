import Hummingbird
import Logging
import NIOCore

/// The request context of every Reclaim route: Hummingbird's basic context, the connection's channel so that a
/// route can end a connection that misbehaves (see ``closeSoon()``), and who the request is from, as the
/// authentication middleware of its routes found.
public struct ReclaimRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// Set by ``KeyAuthenticator`` on the routes it guards.
    var caller: Caller?
    /// Set by ``AppUserAuthenticator`` on the routes it guards.
    var user: AppUser?
    /// Set by ``ConsoleSessionAuthenticator`` when the request carries a console session cookie.
    var consoleSession: ConsoleSessionState?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// Ends the connection once the answer now being prepared (a refusal of the body) was sent: after a 413
    /// Hummingbird would read and discard the rest of the body to reuse the connection, for a chunked body without
    /// end gigabytes. ``LingeringClose`` instead drains what the client still sends while it keeps sending (for at most 10 s and 16 MiB), so
    /// that a client still writing its body can read the answer, then closes.
    func closeSoon() {
        channel.triggerUserOutboundEvent(LingeringClose.Start(), promise: nil)
    }
}
