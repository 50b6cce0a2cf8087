import Hummingbird
import NIOCore
import Prometheus

/// `GET /metrics`: Prometheus text exposition of the registry the process bootstrapped.
struct MetricsRoute {
    let registry: PrometheusCollectorRegistry

    func register(on router: Router<ReclaimRequestContext>) {
        router.get("/metrics") { _, _ -> Response in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(16 * 1024)
            registry.emit(into: &bytes)
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
