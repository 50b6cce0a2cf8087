import NIOCore

/// nginx's lingering close for a refused request: after the answer (a 413) goes out, keep reading and discarding
/// what the client still sends, for at most `maxTime` and `maxBytes`, then close.
///
/// Why: a client that writes its whole body before it reads (Python's `urllib.request`, which also sends
/// `Connection: close`) is still writing when the server answers early. Closing with its bytes unread makes the
/// kernel reset the connection, and that client sees `Broken pipe` instead of the 413. Draining lets it finish its
/// write and read the answer. curl, `http.client` and raw sockets read while they write and never noticed.
///
/// Sits first in the pipeline, on raw bytes, ahead of HTTP decoding (which stops reading once it has answered a
/// `Connection: close` request). ``ReclaimRequestContext/closeSoon()`` starts it with ``Start``.
final class LingeringClose: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The user outbound event that starts lingering.
    struct Start: Sendable {}

    let maxBytes: Int
    let maxTime: TimeAmount
    private var lingering = false
    private var closing = false
    private var discarded = 0
    private var deadline: Scheduled<Void>?
    /// The promise of the full close asked for while lingering: completed when the connection really closes.
    private var pendingClose: EventLoopPromise<Void>?

    init(maxBytes: Int = 16 * 1024 * 1024, maxTime: TimeAmount = .seconds(2)) {
        self.maxBytes = maxBytes
        self.maxTime = maxTime
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Start else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed(())
        guard !lingering else { return }
        lingering = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: maxTime) { bound.value.0.finish(bound.value.1) }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering else { return context.fireChannelRead(data) }
        discarded += unwrapInboundIn(data).readableBytes
        if discarded > maxBytes { finish(context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard lingering else { return context.fireChannelReadComplete() }
        // Nothing downstream asks for more now: keep reading on its behalf.
        if !closing { context.read() }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard lingering, !closing, mode == .all else { return context.close(mode: mode, promise: promise) }
        // The answer is written: let the client see its end, and keep draining until it is done or time is up.
        context.close(mode: .output, promise: nil)
        if let promise {
            if let pendingClose { pendingClose.futureResult.cascade(to: promise) } else { pendingClose = promise }
        }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, case ChannelEvent.inputClosed = event { return finish(context) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    private func finish(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        deadline?.cancel()
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
