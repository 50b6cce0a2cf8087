import Hummingbird

/// `GET /openapi.yaml`: the document describing every route (`openapi.yaml` at the repository root; a test
/// holds the router and the document to each other).
struct OpenAPIRoute {
    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.text))
            )
        }
    }
}
