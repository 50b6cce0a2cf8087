// swift-tools-version: 6.1
import PackageDescription

// The app-side client: a package of its own, with no dependencies, so an app that adds it compiles none of
// the server's (Hummingbird, PostgresNIO, swift-crypto…). The server package uses it by path for its tests.
let package = Package(
    name: "ReclaimClient",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "ReclaimClient", targets: ["ReclaimClient"])
    ],
    targets: [
        .target(name: "ReclaimClient", swiftSettings: [.swiftLanguageMode(.v6)])
    ]
)
