// A stand-in for the few SwiftUI symbols (and StoreKit's SwiftUI overlay, `_StoreKit_SwiftUI`) that the SwiftUI example
// (Examples/SwiftUI) uses, so that scripts/check-client type-checks it on Linux against ReclaimClient and the StoreKit
// stand-in, as it does the glue; built as the module SwiftUI, which imports StoreKit (where Apple's overlay appears
// when an app imports both).
//
// Each declaration is transcribed from Apple's documentation (developer.apple.com/documentation/swiftui and
// /storekit, read 2026-12; the cancel flow's, 2027-01); Apple's declaration and availability are quoted above it. Where Apple's newest pages show
// the Xcode 27 form (`@ContentBuilder`, builders that take any type), the stand-in keeps the stricter Xcode 26 form
// (`@ViewBuilder`, every child a View): code that type-checks here builds with either. Only the shape matters: the
// bodies never run, and the views have no content (their `body` is `_Primitive`, the stand-in's own leaf).
// Do not add a symbol from memory.

import Foundation
import Observation
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

// Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.0+, macOS 10.15+, tvOS 13.0+, visionOS 1.0+, watchOS 6.0+):
// `@frozen @propertyWrapper @dynamicMemberLookup struct Binding<Value>`, "A property wrapper type that can read and write
// a value owned by a source of truth" (developer.apple.com/documentation/swiftui/binding). Only the type is transcribed:
// the example makes its bindings with `Bindable`, never declares one, so the wrapper and its member lookup are not.
public struct Binding<Value> {}

// Apple (iOS 17.0+, iPadOS 17.0+, Mac Catalyst 17.0+, macOS 14.0+, tvOS 17.0+, visionOS 1.0+, watchOS 10.0+):
// `@dynamicMemberLookup @propertyWrapper struct Bindable<Value>`, "A property wrapper type that supports creating bindings
// to the mutable properties of observable objects" (developer.apple.com/documentation/swiftui/bindable).
@dynamicMemberLookup
@propertyWrapper
public struct Bindable<Value> {
    // Apple: `var wrappedValue: Value`, "The wrapped object".
    public var wrappedValue: Value {
        get { fatalError("SwiftUI interface stand-in: declarations only") }
        nonmutating set {}
    }

    // Apple: `var projectedValue: Bindable<Value> { get }`, "The bindable wrapper for the object that creates bindings to
    // its properties using dynamic member lookup".
    public var projectedValue: Bindable<Value> { self }

    // Apple: `init(wrappedValue: Value)`, "Creates a bindable object from an observable object"; its symbol
    // (`…BindableVAARlzC11Observation10ObservableRzlE12wrappedValue…`) is in an extension where Value is a class and
    // Observable, which this where clause stands for (declared here, it leaves the wrapper no other initializer).
    public init(wrappedValue: Value) where Value: AnyObject, Value: Observable {}
}

extension Bindable where Value: AnyObject {
    // Apple: `subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> {
    // get }`, "Returns a binding to the value of a given key path"; its symbol (`…BindableVAARlzClE13dynamicMember…`) is
    // in the extension where Value is a class.
    public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> { Binding() }
}

// Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.0+, macOS 10.15+, tvOS 13.0+, visionOS 1.0+, watchOS 6.0+):
// `struct ForEach<Data, ID, Content> where Data : RandomAccessCollection, ID : Hashable`, "A structure that computes views
// on demand from an underlying collection of identified data" (developer.apple.com/documentation/swiftui/foreach). A View
// when its content is: Apple's own example returns one from `var body: some View`, and `List` below, whose content must
// be a View, is made of one. Its initializers are not transcribed: the example makes it through `List`.
public struct ForEach<Data, ID, Content> where Data: RandomAccessCollection, ID: Hashable {}

extension ForEach: View where Content: View {
    public var body: _Primitive { _Primitive() }
}

// Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.0+, macOS 10.15+, tvOS 13.0+, visionOS 1.0+, watchOS 6.0+):
// `nonisolated struct List<SelectionValue, Content> where SelectionValue : Hashable, Content : View`, "A container that
// presents rows of data arranged in a single column, optionally providing the ability to select one or more members"
// (developer.apple.com/documentation/swiftui/list).
public struct List<SelectionValue, Content>: View where SelectionValue: Hashable, Content: View {
    public var body: _Primitive { _Primitive() }
}

extension List where SelectionValue == Never {
    // Apple (iOS 13.0+, iPadOS 13.0+, Mac Catalyst 13.0+, macOS 10.15+, tvOS 13.0+, visionOS 1.0+, watchOS 6.0+):
    // `nonisolated init<Data, RowContent>(_ data: Data, @ContentBuilder rowContent: @escaping (Data.Element) ->
    // RowContent) where Content == ForEach<Data, Data.Element.ID, RowContent>, Data : RandomAccessCollection, RowContent :
    // View, Data.Element : Identifiable`, "Creates a list that computes its rows on demand from an underlying collection of
    // identifiable data" (developer.apple.com/documentation/swiftui/list/init(_:rowcontent:)-3vn6i); its symbol
    // (`…ListVAAs5NeverORszrlE_10rowContent…`) is in the extension where SelectionValue is Never.
    public nonisolated init<Data, RowContent>(_ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent)
    where Content == ForEach<Data, Data.Element.ID, RowContent>, Data: RandomAccessCollection, RowContent: View, Data.Element: Identifiable {}
}

extension EnvironmentValues {
    // Apple (iOS 14.0+, iPadOS 14.0+, Mac Catalyst 14.0+, macOS 11.0+, tvOS 14.0+, visionOS 1.0+, watchOS 7.0+):
    // `@MainActor @preconcurrency var openURL: OpenURLAction { get set }`, "An action that opens a URL"
    // (developer.apple.com/documentation/swiftui/environmentvalues/openurl). Only its getter is transcribed.
    @MainActor
    @preconcurrency
    public var openURL: OpenURLAction { fatalError("SwiftUI interface stand-in: declarations only") }
}

// Apple (iOS 14.0+, iPadOS 14.0+, Mac Catalyst 14.0+, macOS 11.0+, tvOS 14.0+, visionOS 1.0+, watchOS 7.0+):
// `@MainActor @preconcurrency struct OpenURLAction`, "An action that opens a URL"; "The system provides a default open URL
// action with behavior that depends on the contents of the URL" (developer.apple.com/documentation/swiftui/openurlaction).
@MainActor
@preconcurrency
public struct OpenURLAction {
    // Apple (same availability): `@MainActor @preconcurrency func callAsFunction(_ url: URL)`, "Opens a URL, following
    // system conventions" (developer.apple.com/documentation/swiftui/openurlaction/callasfunction(_:)).
    public func callAsFunction(_ url: URL) {}
}

extension View {
    // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, visionOS 1.0+; not macOS, tvOS, watchOS; StoreKit's SwiftUI
    // overlay): `nonisolated func manageSubscriptionsSheet(isPresented: Binding<Bool>) -> some View`
    // (developer.apple.com/documentation/swiftui/view/managesubscriptionssheet(ispresented:)).
    public nonisolated func manageSubscriptionsSheet(isPresented: Binding<Bool>) -> some View { _Primitive() }

    // Apple (iOS 15.0+, iPadOS 15.0+, Mac Catalyst 15.0+, macOS 14.0+, visionOS 1.0+; not tvOS, watchOS; StoreKit's
    // SwiftUI overlay): `@preconcurrency nonisolated func refundRequestSheet(for transactionID: Transaction.ID,
    // isPresented: Binding<Bool>, onDismiss: (@MainActor (Result<Transaction.RefundRequestStatus,
    // Transaction.RefundRequestError>) -> ())? = nil) -> some View`, "Display the refund request sheet for the given
    // transaction"; `onDismiss`: "The closure to execute when dismissing the sheet, with the result of the refund request
    // provided as a parameter" (developer.apple.com/documentation/swiftui/view/refundrequestsheet(for:ispresented:ondismiss:)).
    @preconcurrency
    public nonisolated func refundRequestSheet(
        for transactionID: Transaction.ID,
        isPresented: Binding<Bool>,
        onDismiss: (@MainActor (Result<Transaction.RefundRequestStatus, Transaction.RefundRequestError>) -> Void)? = nil
    ) -> some View {
        _Primitive()
    }
}
