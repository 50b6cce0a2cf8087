import Foundation
import Hummingbird

/// An encoded value as an `application/json` response, with sorted keys and unescaped slashes: what routes
/// that answer with a value return. `headers` are added after the content type (e.g. `Cache-Control`).
struct JSONBody<Value: Encodable>: ResponseGenerator {
    var value: Value
    var status: HTTPResponse.Status
    var headers: HTTPFields

    init(_ value: Value, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) {
        self.value = value
        self.status = status
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var fields: HTTPFields = [.contentType: "application/json"]
        fields.append(contentsOf: headers)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}

extension JSONBody: Sendable where Value: Sendable {}
