import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ReclaimTestSupport
import Synchronization
import Testing

@testable import ReclaimService

@Suite("LOG_FORMAT=json and X-Request-Id", .poolWatchdog)
struct JSONLogTests {
    @Test("one JSON object a line, strings escaped, the request id as request_id, the line's metadata over the logger's")
    func jsonLines() throws {
        let lines = LineCollector()
        var logger = Logger(label: "reclaim") { JSONLogHandler(label: $0, write: lines.append) }
        logger.logLevel = .info
        logger[metadataKey: "hb.request.id"] = "req-1"
        logger[metadataKey: "route"] = "/v1/offers"
        logger.debug("not written")
        logger.info("quote \" backslash \\ newline \n tab \t bell \u{07} é", metadata: ["route": "override", "list": ["a", "b"]])
        logger.error("second", metadata: ["message": "cannot replace the message"])

        let written = lines.all
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0.hasSuffix("}\n") && $0.dropLast().contains("\n") == false })
        let first = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: String])
        #expect(first["message"] == "quote \" backslash \\ newline \n tab \t bell \u{07} é")
        #expect(first["level"] == "info")
        #expect(first["label"] == "reclaim")
        #expect(first["request_id"] == "req-1")
        #expect(first["hb.request.id"] == nil)
        #expect(first["route"] == "override")
        #expect(first["list"] == #"["a", "b"]"#)
        #expect(first["time"].flatMap { try? Date($0, strategy: .iso8601) } != nil, "\(first["time"] ?? "")")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(written[1].utf8)) as? [String: String])
        #expect(second["message"] == "second")
        #expect(second["level"] == "error")
    }

    @Test("every response carries X-Request-Id; a plain id from a proxy is kept, anything else replaced")
    func requestIds() async throws {
        let router = Router(context: ReclaimRequestContext.self)
        router.add(middleware: RequestIdMiddleware())
        router.add(middleware: ProblemMiddleware())
        router.get("/seen") { _, context in context.id }
        try await Application(router: router).test(.router) { http in
            let generated = try await http.execute(uri: "/seen", method: .get) { response in
                #expect(response.headers[RequestIdMiddleware<ReclaimRequestContext>.header] == String(buffer: response.body))
                return String(buffer: response.body)
            }
            #expect(!generated.isEmpty)
            try await http.execute(uri: "/seen", method: .get, headers: [RequestIdMiddleware<ReclaimRequestContext>.header: "proxy-42.a:b_c"]) {
                #expect(String(buffer: $0.body) == "proxy-42.a:b_c")
                #expect($0.headers[RequestIdMiddleware<ReclaimRequestContext>.header] == "proxy-42.a:b_c")
            }
            for hostile in ["with space", String(repeating: "x", count: 129), "quote\"", "é"] {
                try await http.execute(uri: "/seen", method: .get, headers: [RequestIdMiddleware<ReclaimRequestContext>.header: hostile]) {
                    #expect(String(buffer: $0.body) != hostile)
                    #expect($0.headers[RequestIdMiddleware<ReclaimRequestContext>.header] == String(buffer: $0.body))
                }
            }
            // Errors too: the problem+json of an unknown route names its request.
            try await http.execute(uri: "/nowhere", method: .get) {
                #expect($0.status == .notFound)
                #expect($0.headers[RequestIdMiddleware<ReclaimRequestContext>.header]?.isEmpty == false)
            }
        }
    }
}
