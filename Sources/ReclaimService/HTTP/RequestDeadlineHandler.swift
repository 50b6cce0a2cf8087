import HTTPTypes
import Metrics
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client is too slow: a request head must arrive within `headerTimeout` (from the
/// connection's start, or from the previous response's end), and its body within `bodyTimeout` of the head.
/// Hummingbird's idle timeout alone lets a client that sends one byte a second hold a connection for ever.
/// Sits after HTTP decoding, so it sees whole heads and bodies' ends, and the responses going out.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let headerTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(headerTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(headerTimeout, phase: "header", context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(bodyTimeout, phase: "body", context: context)
        case .end:
            // The request is whole; how long the answer takes is the server's business, not the client's.
            deadline?.cancel()
            deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(headerTimeout, phase: "header", context: context) }
        context.write(data, promise: promise)
    }

    private func arm(_ timeout: TimeAmount, phase: String, context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            Counter(label: "reclaim_http_timeouts_total", dimensions: [("phase", phase)]).increment()
            channel.close(promise: nil)
        }
    }
}
