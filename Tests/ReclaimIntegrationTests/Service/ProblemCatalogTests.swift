import Foundation
import Hummingbird
import ReclaimTestSupport
import Testing
import Yams

@testable import ReclaimClient
@testable import ReclaimService

@Suite("The problem catalog: every problem type defined once, and documented as defined", .poolWatchdog)
struct ProblemCatalogTests {
    struct Entry: Hashable, CustomStringConvertible {
        let slug: String
        let status: Int
        let title: String
        var description: String { "\(slug) \(status) \(title)" }
    }

    /// The Problem schema's `x-problem-types` of the document the server serves (compiled in from openapi.yaml).
    static func documentedTypes() throws -> [Entry] {
        let document = try #require(try Yams.load(yaml: OpenAPIDocument.text) as? [String: Any])
        let components = try #require(document["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let problem = try #require(schemas["Problem"] as? [String: Any])
        let list = try #require(problem["x-problem-types"] as? [[String: Any]], "the Problem schema has no x-problem-types list")
        return try list.map { entry in
            Entry(
                slug: try #require(entry["slug"] as? String, "\(entry)"),
                status: try #require(entry["status"] as? Int, "\(entry)"),
                title: try #require(entry["title"] as? String, "\(entry)")
            )
        }
    }

    @Test("openapi.yaml's x-problem-types lists exactly the catalog's types, each with the catalog's status and title")
    func documentMatchesTheCatalog() throws {
        let documented = try Self.documentedTypes()
        let catalog = ProblemType.allCases.map { Entry(slug: $0.slug, status: $0.status.code, title: $0.title) }
        let missing = Set(catalog).subtracting(documented)
        let unknown = Set(documented).subtracting(catalog)
        #expect(missing.isEmpty, "in the catalog, not in openapi.yaml (or documented otherwise): \(missing.sorted { $0.slug < $1.slug })")
        #expect(unknown.isEmpty, "in openapi.yaml, not in the catalog (or defined otherwise): \(unknown.sorted { $0.slug < $1.slug })")
        #expect(documented.count == Set(documented.map(\.slug)).count, "a slug listed twice in openapi.yaml")
    }

    @Test("every type is a URN the document's pattern accepts, and the client's user-token type is the catalog's")
    func typesAreWellFormed() throws {
        for type in ProblemType.allCases {
            #expect(type.uri == "urn:reclaim:problem:\(type.slug)")
            #expect(!type.slug.isEmpty && type.slug.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }, "\(type.slug)")
            #expect((400..<600).contains(type.status.code), "\(type.slug)")
        }
        // ReclaimClient cannot import the server, so it spells the one type it acts on itself.
        #expect(ReclaimClient.invalidUserToken == ProblemType.invalidUserToken.uri)
    }
}
