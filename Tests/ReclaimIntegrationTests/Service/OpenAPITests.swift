import Foundation
import Hummingbird
import HummingbirdTesting
import ReclaimDomain
import ReclaimService
import ReclaimTestSupport
import Testing

@Suite("openapi.yaml describes exactly the routes the server has", .poolWatchdog)
struct OpenAPITests {
    static let file = Binaries.repositoryRoot.appendingPathComponent("openapi.yaml")

    /// "METHOD /path" of every operation in the document (paths at two spaces, methods at four).
    static func documentedOperations() throws -> Set<String> {
        var operations = Set<String>()
        var path: String?
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("components:") {
                path = nil
            } else if let path, let method = ["get", "post", "put", "patch", "delete"].first(where: { line == "    \($0):" }) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    @Test("the document's webhooks are every event Reclaim sends, the test message and forwarding, each with the signature headers")
    func webhooksMatchTheEvents() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\nwebhooks:\n").dropFirst().first)
        let names = Set(
            section.split(separator: "\n").compactMap { line -> String? in
                line.hasPrefix("  ") && !line.hasPrefix("   ") && line.hasSuffix(":") && !line.hasPrefix("  #")
                    ? String(line.dropFirst(2).dropLast()) : nil
            }
        )
        #expect(names == Set(WebhookEvent.allCases.map(\.rawValue) + [WebhookEvent.testType, "forwardedNotification"]))
        #expect(section.components(separatedBy: "#/components/parameters/WebhookSignature").count - 1 == WebhookEvent.allCases.count + 1)
    }

    @Test("every route in the router is in the document, and every operation of the document is a route")
    func routesMatchTheDocument() async throws {
        try await withTestDatabase { client, _ in
            let router = buildRouter(try Dependencies.test(postgres: client), role: .all)
            let routes = Set(
                router.routes.map { route in
                    // Hummingbird writes a capture as {id}, as OpenAPI does; normalise ":id" too, in case.
                    let path = "\(route.path)".split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                    return "\(route.method) /" + path.filter { !$0.isEmpty }.joined(separator: "/")
                }
            )
            let documented = try Self.documentedOperations()
            #expect(routes == documented, "router: \(routes.sorted())")
        }
    }

    @Test("GET /openapi.yaml serves the repository's openapi.yaml byte for byte (compiled in from it by Package.swift)")
    func servedDocument() async throws {
        try await withTestDatabase { client, _ in
            let app = Application(router: buildRouter(try Dependencies.test(postgres: client)))
            try await app.test(.router) { http in
                let expected = try String(contentsOf: Self.file, encoding: .utf8)
                try await http.execute(uri: "/openapi.yaml", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/yaml")
                    #expect(String(buffer: response.body) == expected)
                }
            }
        }
    }
}
