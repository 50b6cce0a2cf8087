import Foundation
import ReclaimStore
import ReclaimTestSupport
import Testing

@Suite("DATABASE_URL", .poolWatchdog)
struct DatabaseURLTests {
    @Test("sslmode=prefer and allow connect without TLS, and say so; require asks for TLS; disable is quiet")
    func sslModes() throws {
        for mode in ["prefer", "allow"] {
            let url = try DatabaseURL("postgres://u:p@db.example.com:5432/reclaim?sslmode=\(mode)")
            #expect(!url.requireTLS)
            #expect(url.sslModeWarning?.contains("sslmode=\(mode)") == true)
            #expect(url.sslModeWarning?.contains("WITHOUT TLS") == true)
        }
        #expect(try DatabaseURL("postgres://u@h/d?sslmode=require").requireTLS)
        #expect(try DatabaseURL("postgres://u@h/d?sslmode=disable").sslModeWarning == nil)
    }

    @Test("the printable forms never carry the password")
    func passwordMasked() throws {
        let url = try DatabaseURL("postgres://reclaim:s3cret@db.example.com:5432/reclaim")
        #expect(!"\(url)".contains("s3cret"))
        #expect(!url.location.contains("s3cret"))
        #expect(url.connectionString.contains("s3cret"))
    }

    @Test("connect_timeout as libpq reads it: whole seconds, at least 2, 0 for no limit; kept in the URL it hands on")
    func connectTimeout() throws {
        #expect(try DatabaseURL("postgres://u@h/d").connectTimeout == DatabaseURL.defaultConnectTimeout)
        #expect(try DatabaseURL("postgres://u@h/d?connect_timeout=30").connectTimeout == .seconds(30))
        #expect(try DatabaseURL("postgres://u@h/d?connect_timeout=1").connectTimeout == .seconds(2))
        #expect(try DatabaseURL("postgres://u@h/d?connect_timeout=0").connectTimeout == nil)
        #expect(try DatabaseURL("postgres://u@h/d?connect_timeout=-3").connectTimeout == nil)
        // A number from outside: a huge one is clamped, never trapped on.
        #expect(try DatabaseURL("postgres://u@h/d?connect_timeout=9223372036854775807").connectTimeout == .seconds(86_400))
        #expect(throws: DatabaseURL.InvalidURL.self) { try DatabaseURL("postgres://u@h/d?connect_timeout=5s") }
        #expect(throws: DatabaseURL.InvalidURL.self) { try DatabaseURL("postgres://u@h/d?connect_timeout=99999999999999999999") }
        let url = try DatabaseURL("postgres://u:p@h:5433/d?host=/run/pg&connect_timeout=30")
        #expect(url.connectionString == "postgres://u:p@h:5433/d?host=/run/pg&connect_timeout=30")
        #expect(try DatabaseURL(url.connectionString).connectTimeout == .seconds(30))
        #expect(try DatabaseURL("postgres://u@h/d").connectionString == "postgres://u@h:5432/d")
    }

    @Test("several hosts (libpq's failover list) and target_session_attrs are refused, pointing to what routes to the primary")
    func severalHosts() throws {
        for text in [
            "postgres://u:p@db1:5432,db2:5432/reclaim",
            "postgres://u:p,w@db1,db2/reclaim",
            "postgres://u@/reclaim?host=db1,db2",
            "postgres://u@db/reclaim?hostaddr=10.0.0.1,10.0.0.2",
            "postgres://u@db/reclaim?port=5432,5433",
            "postgres://u@db/reclaim?target_session_attrs=read-write",
        ] {
            let error = #expect(throws: DatabaseURL.InvalidURL.self, "\(text)") { try DatabaseURL(text) }
            #expect(error?.description.contains("HAProxy") == true, "\(String(describing: error))")
            #expect(error?.description.contains(":p") != true, "the password stays out of the message")
        }
        // One host stays valid, with a comma in its password and target_session_attrs=any (libpq's default).
        #expect(try DatabaseURL("postgres://u:p,w@db:5432/reclaim?target_session_attrs=any").host == "db")
        #expect(try DatabaseURL("postgres://u:p%2Cw@db/reclaim").password == "p,w")
    }

    @Test("a host that accepts and never answers fails the connection check after connect_timeout, naming the setting")
    func silentHost() async throws {
        // A listening socket that is never accepted: the TCP handshake completes (the backlog), PostgreSQL's
        // start-up message gets no answer.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(listener, 8) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let url = try DatabaseURL("postgres://u@127.0.0.1:\(port)/d?connect_timeout=2")
        let started = ContinuousClock.now
        let error = await #expect(throws: DatabaseURL.Unreachable.self) { try await url.checkConnection(logger: TestPostgres.logger) }
        let took = ContinuousClock.now - started
        // The 2 s budget, and the give-up on time: a timer many times late means something blocks the cooperative pool
        // (the pool watchdog names the tests beside it).
        #expect(took >= .seconds(2) && took < .seconds(4), "gave up after \(took)")
        #expect(error?.description.contains("no answer within 2.0 seconds") == true, "\(String(describing: error))")
        #expect(error?.description.contains("connect_timeout") == true)
    }
}
