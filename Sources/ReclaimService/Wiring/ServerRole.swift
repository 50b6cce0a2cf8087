/// What one `reclaim serve` process does. Any number of each can share one database.
public enum ServerRole: String, Sendable, CaseIterable {
    /// HTTP API and workers in one process (the default, and what `reclaim dev` runs).
    case all
    /// Only the HTTP API; jobs wait in the queue for worker processes.
    case api
    /// Only workers and the refresher; HTTP serves just /healthz, /readyz and /metrics.
    case worker

    public var servesAPI: Bool { self != .worker }
    public var runsWorkers: Bool { self != .api }
}
