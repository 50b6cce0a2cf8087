import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite("Text PostgreSQL cannot store (U+0000) is found with its path", .poolWatchdog)
struct StorableTextTests {
    func path(_ json: String) -> String? { StorableText.nulPath(inJSON: Data(json.utf8)) }

    @Test("the path of the first string holding NUL, in values, keys, nested objects and arrays; none where there is none")
    func paths() {
        #expect(path(#"{"reason": "a\u0000b"}"#) == "reason")
        #expect(path(#"{"a": {"b": [1, "x", "y\u0000"]}}"#) == "a.b[2]")
        #expect(path(#"{"a\u0000": 1}"#) == "a\u{0}")
        #expect(path(#""\u0000""#) == "")
        // An escaped backslash followed by "u0000" is text, not NUL; other escapes are fine.
        #expect(path(#"{"reason": "a\\u0000b", "n": "\u0001\u00e9\ud83d\ude00"}"#) == nil)
        #expect(path(#"{"reason": "plain"}"#) == nil)
        #expect(path("not json") == nil, "not JSON, and no NUL: its parser says so, not this check")
        #expect(path("not json \\u0000") == "", "a NUL escape in what does not parse: refused whole")
        // Invalid UTF-8 beside a NUL: JSONSerialization refuses the document, JSONDecoder reads it (scripts/fuzz found it).
        #expect(StorableText.nulPath(inJSON: Data(#"{"a": "\u0000", "b": ""#.utf8) + Data([0xFF, 0x22, 0x7D])) == "")
        // A key written twice: JSONSerialization keeps the last value, JSONDecoder the first (the NUL): refused whole.
        #expect(path(#"{"productId": "p\u0000", "productId": "p"}"#) == "")
        #expect(StorableText.nulRefusal("reason").reason == "reason holds the character U+0000 (NUL), which cannot be stored")
    }

    @Test("Apple's payloads holding NUL do not decode, naming the field")
    func payloads() {
        let json = Data(#"{"originalTransactionId": "20\u00000", "bundleId": "b", "signedDate": 1}"#.utf8)
        #expect(throws: InvalidInput(StorableText.nulRefusal("originalTransactionId").reason)) {
            try PayloadDecoder.decode(TransactionInfo.self, from: json)
        }
    }
}
