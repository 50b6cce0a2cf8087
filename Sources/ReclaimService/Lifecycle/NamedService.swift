import ServiceLifecycle

/// A service as ServiceLifecycle's logs name it: its type, nothing else. ServiceGroup logs each service's
/// description at debug level ("Starting service", "Service finished"), and the default description of a struct
/// is every stored property: PostgresClient's carries the database password, the outbound sender its targets'
/// headers and URLs with their tokens. Every service the server runs is wrapped in one.
struct NamedService: Service, CustomStringConvertible {
    let service: any Service
    let description: String

    init(_ service: any Service) {
        self.service = service
        self.description = (service as? NamedService)?.description ?? String(describing: type(of: service))
    }

    func run() async throws {
        try await service.run()
    }
}
