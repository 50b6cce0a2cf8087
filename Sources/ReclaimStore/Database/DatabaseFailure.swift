import PostgresNIO

extension PSQLError {
    /// Whether this error means the database is not answering as it should now (the connection or the server is
    /// down, busy, restarting, read-only after a failover, or a transaction lost a conflict) and the same request
    /// later may succeed: HTTP answers 503 with Retry-After. Anything else (a constraint violation, a value the
    /// server refuses, an SQL mistake) is a defect to log and answer as one, never reported as an outage.
    ///
    /// SQLSTATE classes (PostgreSQL's Appendix A): 08 connection exception, 40 transaction rollback (serialization
    /// failure, deadlock), 53 insufficient resources, 57 operator intervention (admin shutdown, cannot connect now,
    /// statement timeout's query_canceled), 58 system error; 25006 read_only_sql_transaction (a replica after a
    /// failover) and 55P03 lock_not_available (lock_timeout).
    public var isOutage: Bool {
        switch code {
        case .server:
            guard let state = serverInfo?[.sqlState] else { return false }
            if ["25006", "55P03"].contains(state) { return true }
            return ["08", "40", "53", "57", "58"].contains(String(state.prefix(2)))
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed, .queryCancelled,
            .sslUnsupported, .failedToAddSSLHandler:
            return true
        default:
            return false
        }
    }

    /// The SQLSTATE of a server error (e.g. `23505`), for logs; nil for an error on this side.
    public var sqlState: String? { serverInfo?[.sqlState] }
}
