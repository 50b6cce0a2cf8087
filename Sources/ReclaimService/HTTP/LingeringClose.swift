import NIOCore

/// nginx's lingering close for a refused request: after the answer (a 413) goes out, keep reading and discarding
/// what the client still sends while it keeps sending (a pause longer than `idleTime` ends it), for at most
/// `maxTime` and `maxBytes` in all, then close.
///
/// Why: a client that writes its whole body before it reads (Python's `urllib.request`, which also sends
/// `Connection: close`) is still writing when the server answers early. Closing with its bytes unread makes the
/// kernel reset the connection, and that client sees `Broken pipe` instead of the 413. Draining lets it finish its
/// write and read the answer. curl, `http.client` and raw sockets read while they write and never noticed.
///
/// Sits first in the pipeline, on raw bytes, ahead of HTTP decoding (which stops reading once it has answered a
/// `Connection: close` request). ``ReclaimRequestContext/closeSoon()`` starts it with ``Start``.
///
/// The limits are nginx's shape (`lingering_timeout` 5 s between reads, `lingering_time` 30 s in all), tighter: a
/// client still writing is drained as long as its bytes keep coming, so a machine too busy to drain 5 MiB within a
/// fixed 2 s no longer resets a client mid-write (it did, under a loaded test run); one that stops sending is
/// closed after `idleTime`; nobody holds a connection past `maxTime` or sends more than `maxBytes`.
final class LingeringClose: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The user outbound event that starts lingering.
    struct Start: Sendable {}

    let maxBytes: Int
    let maxTime: TimeAmount
    let idleTime: TimeAmount
    private var lingering = false
    private var closing = false
    private var discarded = 0
    private var deadline: Scheduled<Void>?
    private var idleDeadline: Scheduled<Void>?
    /// The promise of the full close asked for while lingering: completed when the connection really closes.
    private var pendingClose: EventLoopPromise<Void>?

    init(maxBytes: Int = 16 * 1024 * 1024, maxTime: TimeAmount = .seconds(10), idleTime: TimeAmount = .seconds(2)) {
        self.maxBytes = maxBytes
        self.maxTime = maxTime
        self.idleTime = idleTime
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Start else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed(())
        guard !lingering, !closing else { return }
        lingering = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: maxTime) { bound.value.0.finish(bound.value.1) }
        restartIdleDeadline(context)
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering else { return context.fireChannelRead(data) }
        discarded += unwrapInboundIn(data).readableBytes
        if discarded > maxBytes { return finish(context) }
        restartIdleDeadline(context)
    }

    /// The client is still sending: give it another `idleTime` from now.
    private func restartIdleDeadline(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        idleDeadline?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleDeadline = context.eventLoop.scheduleTask(in: idleTime) { bound.value.0.finish(bound.value.1) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard lingering else { return context.fireChannelReadComplete() }
        // Nothing downstream asks for more now: keep reading on its behalf.
        if !closing { context.read() }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard lingering, !closing, mode == .all else { return context.close(mode: mode, promise: promise) }
        if let promise {
            if let pendingClose { pendingClose.futureResult.cascade(to: promise) } else { pendingClose = promise }
        }
        // The answer is written: let the client see its end, and keep draining until it is done or time is up.
        // Held first: when the client already closed its side, closing ours ends the connection here and now
        // (`channelInactive` completes what is held).
        context.close(mode: .output, promise: nil)
        if !closing { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, case ChannelEvent.inputClosed = event { return finish(context) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed by another path than `finish` (a reset, a read error, the idle timeout): nothing is left to drain.
        // A close asked for while lingering waits on `pendingClose`; complete it now, and let later closes through
        // to the channel, which fails them at once (already closed). Before, they waited on a promise nothing
        // would complete, and the connection's task (Hummingbird's `executeThenClose` awaits its close after a read
        // error) never ended: the server's graceful shutdown waited for it for ever.
        closing = true
        deadline?.cancel()
        idleDeadline?.cancel()
        pendingClose?.succeed(())
        pendingClose = nil
        context.fireChannelInactive()
    }

    private func finish(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        deadline?.cancel()
        idleDeadline?.cancel()
        context.close(mode: .all, promise: pendingClose)
    }
}

/// Puts ``LingeringClose`` first in the pipeline: Hummingbird adds its `additionalChannelHandlers` after HTTP
/// decoding, where the raw bytes are no longer seen. Removes itself once done.
final class LingeringCloseInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(LingeringClose(), position: .first)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
