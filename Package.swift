// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// Settings shared by every target: Swift 6 language mode and the upcoming features we rely on.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Every server dependency is a product behind the `Server` trait (on by default). An app that adds this repository
/// with `traits: []` for ``ReclaimClient`` then neither resolves nor fetches any of them: SwiftPM omits a package whose
/// every use is guarded by a trait that is off (plain target-based resolution still fetches them all).
func server(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}

/// The platforms. SwiftPM has one set of minimums per package, and an app can add a package only if its own minimums
/// are at least the package's; a manifest cannot see which traits are on. The two users of this package need different
/// macOS minimums:
/// - an app that adds ReclaimClient needs what StoreKit 2 needs: iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1
///   (with `.macOS(.v15)` for everything, a Mac app supporting macOS 12–14 could not add it at all);
/// - the server, built on a Mac for `reclaim dev` and the tests, needs macOS 15: it uses Synchronization's Mutex
///   (macOS 15) in 17 files, and swift-prometheus requires macOS 13, which SwiftPM enforces on the targets that use it.
///   On Linux, where it runs in production, platforms do not apply.
/// `@available(macOS 15, *)` on the server's code instead would have to reach every type that holds a Mutex and all
/// their users; a second package cannot be added by URL from the same repository. So the minimums depend on where
/// the package is: as a dependency SwiftPM and Xcode check it out into a folder named `checkouts`, and there the
/// client's minimums apply (nothing of the server is built there: an app adds it with `traits: []`); anywhere else —
/// this repository checked out to build the server — macOS 15. RECLAIM_PLATFORMS=client or =server overrides the
/// guess (an app that adds a local clone by path and supports macOS 12–14 sets =client). scripts/check-client
/// evaluates this manifest both ways.
let serverPlatforms: [SupportedPlatform] = [.macOS(.v15), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)]
let clientPlatforms: [SupportedPlatform] = [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)]
let isDependencyCheckout = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent == "checkouts"
let platforms: [SupportedPlatform] =
    switch Context.environment["RECLAIM_PLATFORMS"] {
    case "client": clientPlatforms
    case "server": serverPlatforms
    default: isDependencyCheckout ? clientPlatforms : serverPlatforms
    }

let package = Package(
    name: "reclaim",
    platforms: platforms,
    products: [
        .executable(name: "reclaim", targets: ["reclaim"]),
        // The app-side client. Its target depends on nothing, so an app that adds this repository by URL and uses
        // only this product resolves, fetches and compiles none of the server's packages (SwiftPM resolves by
        // target: scripts/check-client proves it from a package outside the repository).
        .library(name: "ReclaimClient", targets: ["ReclaimClient"]),
    ],
    traits: [
        .trait(name: "Server", description: "The server, its command line and tests: everything but ReclaimClient."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.26.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.25.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.0"),
        // Yams 6: its composer refuses a key written twice in one mapping (5 kept the last silently).
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.26.0"),
    ],
    targets: [
        // The app-side client: Foundation only (and StoreKit on Apple platforms). Nothing else, ever.
        .target(name: "ReclaimClient", swiftSettings: swiftSettings),
        // Pure domain: models, campaign rules, signing, JWS and chain verification. No I/O.
        .target(
            name: "ReclaimDomain",
            dependencies: [
                server("Crypto", "swift-crypto"),
                server("SwiftASN1", "swift-asn1"),
                server("X509", "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL: schema, migrations, queue, repositories.
        .target(
            name: "ReclaimStore",
            dependencies: [
                "ReclaimDomain",
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("NIOSSL", "swift-nio-ssl"),
                server("PostgresNIO", "postgres-nio"),
            ],
            // schema.sql and migrations/, compiled in from the top-level copies (symbolic links here): SchemaSQL.
            resources: [.embedInCode("Schema/schema.sql"), .embedInCode("Schema/migrations")],
            swiftSettings: swiftSettings
        ),
        // HTTP routes, workers, config and wiring.
        .target(
            name: "ReclaimService",
            dependencies: [
                "ReclaimDomain",
                "ReclaimStore",
                server("Crypto", "swift-crypto"),
                server("SwiftASN1", "swift-asn1"),
                server("Hummingbird", "hummingbird"),
                server("HummingbirdCore", "hummingbird"),
                server("Logging", "swift-log"),
                server("NIOCore", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                // NIOThreadPool: getaddrinfo (which blocks) for the outbound targets' address checks.
                server("NIOPosix", "swift-nio"),
                server("PostgresNIO", "postgres-nio"),
                server("Metrics", "swift-metrics"),
                // The App Store Server API client (reconcile, backfill, test notifications).
                server("AsyncHTTPClient", "async-http-client"),
                // /console's HTML templates; no dependencies of its own.
                server("Mustache", "swift-mustache"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("UnixSignals", "swift-service-lifecycle"),
                server("X509", "swift-certificates"),
                server("Yams", "Yams"),
            ],
            // Compiled in from the top-level files (symbolic links here, which SwiftPM follows): the version, CHANGELOG.md's
            // newest release (ReclaimVersion), and the API document GET /openapi.yaml serves (OpenAPIDocument).
            resources: [.embedInCode("Logging/CHANGELOG.md"), .embedInCode("HTTP/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        // `reclaim dev` and what only it, the tests and the benchmarks use: the embedded PostgreSQL (initdb, pg_ctl
        // as child processes), the throw-away CA that signs demo notifications, posting them over HTTP. Only the
        // `reclaim` executable links it; the service and the store know nothing of it.
        .target(
            name: "ReclaimDev",
            dependencies: [
                "ReclaimDomain",
                "ReclaimService",
                "ReclaimStore",
                server("AsyncHTTPClient", "async-http-client"),
                server("Crypto", "swift-crypto"),
                server("Logging", "swift-log"),
                server("NIOCore", "swift-nio"),
                server("NIOHTTP1", "swift-nio"),
                server("PostgresNIO", "postgres-nio"),
                server("Prometheus", "swift-prometheus"),
                server("SwiftASN1", "swift-asn1"),
                server("X509", "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "reclaim",
            dependencies: [
                "ReclaimDev",
                "ReclaimDomain",
                "ReclaimService",
                "ReclaimStore",
                server("ArgumentParser", "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings,
            // The commit `reclaim --version` names (BuildCommit), recorded before each build.
            plugins: [.plugin(name: "ReclaimCommit")]
        ),
        .plugin(name: "ReclaimCommit", capability: .buildTool()),
        // Benchmarks (`scripts/bench NAME` builds this in release) and the queue test's worker processes.
        .executableTarget(
            name: "reclaim-bench",
            dependencies: [
                server("Crypto", "swift-crypto"),
                "ReclaimDev",
                server("SwiftASN1", "swift-asn1"),
                server("X509", "swift-certificates"),
                "ReclaimDomain",
                "ReclaimService",
                "ReclaimStore",
                server("Logging", "swift-log"),
                server("PostgresNIO", "postgres-nio"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("UnixSignals", "swift-service-lifecycle"),
                server("Hummingbird", "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fuzz targets: every parser of outside input as a function of bytes (Fuzz/Targets), and the libFuzzer
        // binary that drives them (scripts/fuzz builds it with -sanitize=fuzzer,address; built normally it replays files).
        .target(
            name: "ReclaimFuzzTargets",
            dependencies: ["ReclaimDomain"],
            path: "Fuzz/Targets",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "reclaim-fuzz",
            dependencies: ["ReclaimFuzzTargets"],
            path: "Fuzz/Runner",
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by both test targets: the real notifications, subprocesses; re-exports ReclaimDev
        // (the throw-away CA shaped like Apple's, the embedded PostgreSQL).
        .target(
            name: "ReclaimTestSupport",
            dependencies: [
                "ReclaimDev",
                "ReclaimDomain",
                server("Crypto", "swift-crypto"),
                server("SwiftASN1", "swift-asn1"),
                server("X509", "swift-certificates"),
            ],
            path: "Tests/ReclaimTestSupport",
            swiftSettings: swiftSettings
        ),
        // Fast unit tests: no database, no network.
        .testTarget(
            name: "ReclaimDomainTests",
            dependencies: ["ReclaimDomain", "ReclaimFuzzTargets", "ReclaimTestSupport"],
            swiftSettings: swiftSettings
        ),
        // Integration tests against a real PostgreSQL that the harness starts (initdb into a temp folder).
        .testTarget(
            name: "ReclaimIntegrationTests",
            dependencies: [
                "ReclaimDev",
                "ReclaimDomain",
                "ReclaimStore",
                "ReclaimService",
                "ReclaimTestSupport",
                server("AsyncHTTPClient", "async-http-client"),
                server("Hummingbird", "hummingbird"),
                server("HummingbirdTesting", "hummingbird"),
                server("Yams", "Yams"),
                server("Logging", "swift-log"),
                server("Metrics", "swift-metrics"),
                server("NIOCore", "swift-nio"),
                server("NIOEmbedded", "swift-nio"),
                server("PostgresNIO", "postgres-nio"),
                server("Crypto", "swift-crypto"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("X509", "swift-certificates"),
                "ReclaimClient",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
