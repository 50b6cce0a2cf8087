/// `openapi.yaml`, compiled into the binary so that `GET /openapi.yaml` needs no file at run time. The top-level file
/// is the only copy: `HTTP/openapi.yaml` links to it and Package.swift embeds it with `.embedInCode`.
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)
}
