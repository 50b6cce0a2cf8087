import NIOCore
import NIOEmbedded
import Testing

@testable import ReclaimService

@Suite("The lingering close after a refused body")
struct LingeringCloseTests {
    /// A channel with the handler first and lingering started, as after a 413. With `halfClose`, closing the output
    /// leaves the connection open, as a TCP socket's does (an EmbeddedChannel closes whole for any mode).
    func lingeringChannel(halfClose: Bool = true) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        if halfClose { try channel.pipeline.syncOperations.addHandler(OutputHalfClose()) }
        try channel.pipeline.syncOperations.addHandler(LingeringClose())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.pipeline.triggerUserOutboundEvent(LingeringClose.Start(), promise: nil)
        return channel
    }

    @Test("a close asked for after the connection ended another way (a reset) completes at once")
    func closeAfterReset() throws {
        let channel = try lingeringChannel()
        // The reset: the channel goes inactive without the drain's own close.
        channel.pipeline.fireChannelInactive()
        let closed = Completion(channel.pipeline.close(mode: .all))
        channel.embeddedEventLoop.run()
        // Before, the close was held for a drain that could never end, and its promise never completed: the
        // connection's task waited on it for ever, and so did the server's stop.
        #expect(closed.done, "the close's promise never completed")
    }

    @Test("a close asked for while draining waits for the drain, and completes when the connection ends another way")
    func closeHeldThenReset() throws {
        let channel = try lingeringChannel()
        let closed = Completion(channel.pipeline.close(mode: .all))
        channel.embeddedEventLoop.run()
        #expect(!closed.done, "the close did not wait for the drain")
        channel.pipeline.fireChannelInactive()
        channel.embeddedEventLoop.run()
        #expect(closed.done, "the held close's promise never completed")
    }

    @Test("a close whose half-close ends the connection at once (the client had closed its side) completes")
    func halfCloseEndsTheConnection() throws {
        let channel = try lingeringChannel(halfClose: false)
        let closed = Completion(channel.pipeline.close(mode: .all))
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
        #expect(closed.done, "the close's promise never completed")
    }

    @Test("a close while draining ends when the drain does: the client stops sending for the idle time")
    func closeEndsWithTheDrain() throws {
        let channel = try lingeringChannel()
        let closed = Completion(channel.pipeline.close(mode: .all))
        try channel.writeInbound(ByteBuffer(string: "more of the body"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1900))
        #expect(!closed.done)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(closed.done)
        #expect(!channel.isActive)
    }
}

/// Whether a future has completed; an EmbeddedChannel runs everything on the test's own thread.
private final class Completion: @unchecked Sendable {
    private(set) var done = false
    init(_ future: EventLoopFuture<Void>) { future.whenComplete { _ in self.done = true } }
}

/// Closing the output shuts only the writing side, as on a TCP socket.
private final class OutputHalfClose: ChannelOutboundHandler {
    typealias OutboundIn = Any

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .output { return promise?.succeed(()) ?? () }
        context.close(mode: mode, promise: promise)
    }
}
