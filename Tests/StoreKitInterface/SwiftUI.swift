// A stand-in for the few SwiftUI symbols (and StoreKit's SwiftUI overlay, `_StoreKit_SwiftUI`) that the SwiftUI example
// (Examples/SwiftUI) uses, so that scripts/check-client type-checks it on Linux against ReclaimClient and the StoreKit
// stand-in, as it does the glue; built as the module SwiftUI, which imports StoreKit (where Apple's overlay appears
// when an app imports both).
//
// Each declaration is transcribed from Apple's documentation (developer.apple.com/documentation/swiftui and
// /storekit, read 2026-12); Apple's declaration and availability are quoted above it. Where Apple's newest pages show
// the Xcode 27 form (`@ContentBuilder`, builders that take any type), the stand-in keeps the stricter Xcode 26 form
// (`@ViewBuilder`, every child a View): code that type-checks here builds with either. Only the shape matters: the
// bodies never run, and the views have no content (their `body` is `_Primitive`, the stand-in's own leaf).
// Do not add a symbol from memory.

import Foundation
import StoreKit

// Apple (iOS 13.0+, macOS 10.15+, tvOS 13.0+, watchOS 6.0+, visionOS 1.0+): `@MainActor @preconcurrency protocol View`,
// with `associatedtype Body : View` and `@ContentBuilder @MainActor @preconcurrency var body: Self.Body { get }`
// (`@ViewBuilder` before Xcode 27).
@MainActor
@preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

/// The stand-in's leaf: what its views are made of (not Apple's).
public struct _Primitive: View {
    public nonisolated init() {}
    public var body: _Primitive { self }
}

// Apple (iOS 13.0+, visionOS 1.0+): `@resultBuilder struct ViewBuilder`, "A custom parameter attribute that constructs
// views from closures".
@resultBuilder
public struct ViewBuilder {
    // Apple: `static func buildBlock<Content>(_ content: Content) -> Content`, "Passes a single piece of content
    // written as a child view through unmodified".
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }

    // Apple: `static func buildBlock<each Content>(_ content: repeat each Content) -> TupleView<(repeat each Content)>
    // where repeat each Content : View`
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView()
    }
}

// Apple: `TupleView<T>`, what `buildBlock` makes of several children (a View).
public struct TupleView<T>: View {
    public nonisolated init() {}
    public var body: _Primitive { _Primitive() }
}

// Apple (iOS 13.0+, visionOS 1.0+): `@frozen nonisolated struct VStack<Content> where Content : View`, and
// `nonisolated init(alignment: HorizontalAlignment = .center, spacing: CGFloat? = nil, @ContentBuilder content: () ->
// Content)` (alignment not transcribed: not used).
public struct VStack<Content: View>: View {
    public nonisolated init(spacing: CGFloat? = nil, @ViewBuilder content: () -> Content) {}
    public var body: _Primitive { _Primitive() }
}

// Apple (iOS 13.0+, visionOS 1.0+): `struct Text` (a View); `init<S>(_ content: S) where S : StringProtocol`, "Creates a
// text view that displays a stored string without localization".
public struct Text: View {
    public nonisolated init<S>(_ content: S) where S: StringProtocol {}
    public var body: _Primitive { _Primitive() }
}

// Apple (iOS 13.0+, visionOS 1.0+): `nonisolated struct Button<Label> where Label : View`; where Label is Text:
// `@preconcurrency nonisolated init<S>(_ title: S, action: @escaping @MainActor () -> Void) where S : StringProtocol`.
public struct Button<Label: View>: View {
    public var body: _Primitive { _Primitive() }
}

extension Button where Label == Text {
    @preconcurrency
    public nonisolated init<S>(_ title: S, action: @escaping @MainActor () -> Void) where S: StringProtocol {}
}

extension View {
    // Apple (iOS 15.0+, macOS 12.0+, tvOS 15.0+, watchOS 8.0+, visionOS 1.0+): `nonisolated func task(name: String? =
    // nil, priority: TaskPriority = .userInitiated, file: String = #fileID, line: Int = #line, _ action: sending
    // @escaping @isolated(any) () async -> Void) -> some View`, "Adds an asynchronous task to perform before this view
    // appears".
    public nonisolated func task(
        name: String? = nil,
        priority: TaskPriority = .userInitiated,
        file: String = #fileID,
        line: Int = #line,
        _ action: sending @escaping @isolated(any) () async -> Void
    ) -> some View {
        _Primitive()
    }
}

// Apple (iOS 13.0+, visionOS 1.0+): `@frozen @propertyWrapper struct Environment<Value>`, with
// `init(_ keyPath: KeyPath<EnvironmentValues, Value>)` and `var wrappedValue: Value { get }`.
@propertyWrapper
public struct Environment<Value> {
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    public var wrappedValue: Value { fatalError("SwiftUI interface stand-in: declarations only") }
}

// Apple (iOS 13.0+, visionOS 1.0+): `struct EnvironmentValues`.
public struct EnvironmentValues {
    public init() {}
}

extension EnvironmentValues {
    // Apple (iOS 17.0+, macOS 14.0+, tvOS 17.0+, watchOS 10.0+, visionOS 1.0+; StoreKit's SwiftUI overlay):
    // `@MainActor @preconcurrency var purchase: PurchaseAction { get }`, "An action that starts an in-app purchase".
    @MainActor
    @preconcurrency
    public var purchase: PurchaseAction { fatalError("SwiftUI interface stand-in: declarations only") }
}

// Apple (iOS 17.0+, macOS 14.0+, tvOS 17.0+, watchOS 10.0+, visionOS 1.0+): `@MainActor @preconcurrency struct
// PurchaseAction`, "Use PurchaseAction for apps that use SwiftUI, including multi-scene apps for visionOS."
@MainActor
@preconcurrency
public struct PurchaseAction {
    // Apple (iOS 17.0+, visionOS 1.0+): `@MainActor @preconcurrency func callAsFunction(_ product: Product, options:
    // Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult`
    public func callAsFunction(_ product: Product, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        fatalError("SwiftUI interface stand-in: declarations only")
    }
}
