import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite("Base64url (RFC 7515)", .poolWatchdog)
struct Base64URLTests {
    @Test("round trip without padding, url alphabet")
    func roundTrip() throws {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf, 0x00, 0x3e]
        let text = Base64URL.encode(bytes)
        #expect(text == "-_-_AD4")
        #expect(try #require(Base64URL.decode(text)) == Data(bytes))
    }

    @Test("encodes every length like Foundation's base64 with the url alphabet and no padding")
    func encodesLikeFoundation() throws {
        for length in 0...66 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected, "length \(length)")
            #expect(try #require(Base64URL.decode(Base64URL.encode(bytes))) == Data(bytes))
        }
    }

    @Test("refuses the standard alphabet and malformed input")
    func refuses() {
        #expect(Base64URL.decode("+/+/AD4") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab=") == nil)
    }
}
