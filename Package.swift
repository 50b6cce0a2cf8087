// swift-tools-version: 6.1
import PackageDescription

/// Settings shared by every target: Swift 6 language mode and the upcoming features we rely on.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "reclaim",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reclaim", targets: ["reclaim"])
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
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.26.0"),
        // The app-side client, a package of its own so that apps compile none of the above; here for its tests.
        .package(path: "Client"),
    ],
    targets: [
        // Pure domain: models, campaign rules, signing, JWS and chain verification. No I/O.
        .target(
            name: "ReclaimDomain",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL: schema, migrations, queue, repositories.
        .target(
            name: "ReclaimStore",
            dependencies: [
                "ReclaimDomain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // HTTP routes, workers, config and wiring.
        .target(
            name: "ReclaimService",
            dependencies: [
                "ReclaimDomain",
                "ReclaimStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                // The App Store Server API client (reconcile, backfill, test notifications).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // /console's HTML templates; no dependencies of its own.
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Yams", package: "Yams"),
            ],
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Benchmarks (`scripts/bench NAME` builds this in release) and the queue test's worker processes.
        .executableTarget(
            name: "reclaim-bench",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                "ReclaimDev",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                "ReclaimDomain",
                "ReclaimService",
                "ReclaimStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ReclaimClient", package: "Client"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
