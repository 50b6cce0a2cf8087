import Foundation
import ReclaimStore
import Testing

@Suite("DATABASE_URL")
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
}
