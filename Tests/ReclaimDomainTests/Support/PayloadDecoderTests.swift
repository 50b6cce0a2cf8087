import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// The fast payload decoder must give JSONDecoder's answer for every input, and must actually be the one
/// answering for Apple's real payloads (else it is dead weight on the hot path).
@Suite("Payload decoding: the tape decoder agrees with JSONDecoder", .poolWatchdog)
struct PayloadDecoderTests {
    /// Both decoders' outcome for `json`: the value, or that it failed.
    private func outcomes<T: Decodable & Equatable>(_ type: T.Type, _ json: String) -> (ours: T?, foundation: T?, fast: Bool) {
        let data = Data(json.utf8)
        return (
            try? PayloadDecoder.decode(type, from: data), try? JSONDecoder().decode(type, from: data),
            PayloadDecoder.fastDecode(type, from: data) != nil
        )
    }

    @Test("every real notification, transaction and renewal info decodes on the fast path, equal to JSONDecoder")
    func realPayloads() throws {
        var checked = 0
        for notification in try AppleSandboxFixtures.all() {
            let outer = try Self.payload(of: notification.signedPayload)
            let payload = try #require(PayloadDecoder.fastDecode(NotificationPayload.self, from: outer), "\(notification.name)")
            #expect(payload == (try JSONDecoder().decode(NotificationPayload.self, from: outer)), "\(notification.name)")
            if let jws = payload.data?.signedTransactionInfo {
                let json = try Self.payload(of: jws)
                let fast = try #require(PayloadDecoder.fastDecode(TransactionInfo.self, from: json), "\(notification.name)")
                #expect(fast == (try JSONDecoder().decode(TransactionInfo.self, from: json)), "\(notification.name)")
                checked += 1
            }
            if let jws = payload.data?.signedRenewalInfo {
                let json = try Self.payload(of: jws)
                let fast = try #require(PayloadDecoder.fastDecode(RenewalInfo.self, from: json), "\(notification.name)")
                #expect(fast == (try JSONDecoder().decode(RenewalInfo.self, from: json)), "\(notification.name)")
                checked += 1
            }
            checked += 1
        }
        #expect(checked > 300)
    }

    /// Inputs around the edges of what the tape reads; each must end as JSONDecoder ends it.
    static let notificationCases: [(json: String, fast: Bool)] = [
        (#"{"notificationType":"TEST","notificationUUID":"u"}"#, true),
        (" \n\t{ \"notificationType\" : \"TEST\" ,\r\n \"notificationUUID\":\"u\" , \"signedDate\" : 17 } \n", true),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":null,"subtype":null,"data":null}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":-9223372036854775808}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":9223372036854775807}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":-0}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","extra":{"a":[1,true,false,null,{"b":[]},"x"],"c":{}}}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","summary":{"storefrontCountryCodes":["USA","CAN"],"succeededCount":1}}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","summary":{"storefrontCountryCodes":[]}}"#, true),
        (#"{"notificationType":"TEST","notificationUUID":"u","data":{"appAppleId":6747332178,"status":1,"environment":"Sandbox"}}"#, true),
        // Left to JSONDecoder: escapes, non-ASCII, fractions, exponents, overflow, duplicates, deep nesting.
        (#"{"notificationType":"T\u0045ST","notificationUUID":"u\/v"}"#, false),
        (#"{"notificationType":"TÉST","notificationUUID":"ü"}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":1.5}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":1.0}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":1e3}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":9223372036854775808}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":99999999999999999999999}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","notificationUUID":"v"}"#, false),
        (
            #"{"notificationType":"TEST","notificationUUID":"u","x":"#.appending(String(repeating: "[", count: 40)).appending(
                String(repeating: "]", count: 40)
            ) + "}", false
        ),
        (#"{"notificationType":"TEST","notificationUUID":"u","x":1.25e-3}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","x":"tab\there"}"#, false),
        // Wrong or missing fields, invalid JSON: JSONDecoder's error stands.
        (#"{"notificationType":"TEST"}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":null}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":7}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":"17"}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","data":[]}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":017}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","signedDate":-}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u",}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u"} x"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u""#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","x":tru}"#, false),
        (#"{"notificationType":"TEST","notificationUUID":"u","x":nul}"#, false),
        (#"{"notificationType":"TEST""notificationUUID":"u"}"#, false),
        (#"["notificationType","TEST"]"#, false),
        (#""TEST""#, false),
        ("", false),
    ]

    @Test("edge cases end as JSONDecoder ends them", arguments: notificationCases)
    func edgeCases(_ json: String, fast: Bool) {
        let result = outcomes(NotificationPayload.self, json)
        #expect(result.ours == result.foundation)
        #expect(result.fast == fast)
    }

    @Test("types: booleans, arrays of strings and every integer width decode as JSONDecoder decodes them")
    func types() throws {
        struct Everything: Codable, Equatable {
            var flag: Bool
            var names: [String]
            var optionalNames: [String]?
            var int: Int
            var int8: Int8
            var int16: Int16
            var int32: Int32
            var uint: UInt
            var uint8: UInt8
            var uint16: UInt16
            var uint32: UInt32
            var uint64: UInt64
            var nested: [[Int64]]
            var maybe: Bool?
        }
        let plain = """
            {"flag":true,"names":["a","b"],"int":-5,"int8":-128,"int16":32767,"int32":-2147483648,"uint":5,"uint8":255,
             "uint16":65535,"uint32":4294967295,"uint64":18446744073709551615,"nested":[[1],[],[2,3]],"maybe":false}
            """
        let result = outcomes(Everything.self, plain)
        #expect(result.fast && result.ours != nil && result.ours == result.foundation)
        // One past each width's range, and negative unsigned: JSONDecoder refuses, and so do we.
        for (field, value) in [("int8", "128"), ("uint8", "256"), ("uint", "-1"), ("int32", "2147483648")] {
            let json = plain.replacingOccurrences(of: "\"\(field)\":", with: "\"\(field)\":\(value),\"was\":")
            let outcome = outcomes(Everything.self, json)
            #expect(outcome.ours == nil && outcome.foundation == nil, "\(field): \(value)")
        }
        let nulls = outcomes(Everything.self, plain.replacingOccurrences(of: "\"maybe\":false", with: "\"maybe\":null"))
        #expect(nulls.fast && nulls.ours?.maybe == nil && nulls.ours == nulls.foundation)
        let wrongElement = outcomes(Everything.self, plain.replacingOccurrences(of: #"["a","b"]"#, with: #"["a",1]"#))
        #expect(wrongElement.ours == nil && wrongElement.foundation == nil)
    }

    @Test("a duplicated key read through contains (the default decodeIfPresent of Int) is left to JSONDecoder")
    func duplicateKeyThroughContains() {
        struct Counts: Codable, Equatable {
            var n: Int?
            var small: Int8?
        }
        for json in [#"{"n":1,"n":2}"#, #"{"small":1,"small":2}"#, #"{"n":1,"small":null,"small":3}"#] {
            let result = outcomes(Counts.self, json)
            #expect(!result.fast, "\(json)")
            #expect(result.ours == result.foundation, "\(json)")
        }
        let plain = outcomes(Counts.self, #"{"n":1,"small":2}"#)
        #expect(plain.fast && plain.ours == Counts(n: 1, small: 2))
    }

    @Test("types JSONDecoder decodes by its own rules (Data, URL, Decimal, Date) are left to it")
    func foundationTypes() {
        struct Special: Codable, Equatable {
            var data: Data?
            var url: URL?
            var decimal: Decimal?
            var date: Date?
        }
        let cases = [
            #"{"data":[1,2]}"#, #"{"data":"AQI="}"#, #"{"url":{"relative":"https://a"}}"#, #"{"url":"https://a"}"#,
            #"{"decimal":{"exponent":0,"length":1,"isNegative":false,"isCompact":true,"mantissa":[5,0,0,0,0,0,0,0]}}"#,
            #"{"decimal":5}"#, #"{"date":0}"#,
        ]
        for json in cases {
            let result = outcomes(Special.self, json)
            #expect(!result.fast, "\(json)")
            #expect(result.ours == result.foundation, "\(json)")
        }
        // At the top level too.
        for json in [#"[1,2]"#, #""AQI=""#] {
            let result = outcomes(Data.self, json)
            #expect(!result.fast && result.ours == result.foundation, "\(json)")
        }
    }

    @Test("a special byte at any offset of a long string is found (the eight-bytes-at-a-time scan)")
    func specialBytesAtEveryOffset() {
        for length in 0..<24 {
            let plain = String(repeating: "a", count: length)
            let json = #"{"notificationType":"\#(plain)","notificationUUID":"u"}"#
            let clean = outcomes(NotificationPayload.self, json)
            #expect(clean.fast && clean.ours?.notificationType.rawValue == plain)
            for offset in 0..<length {
                for special in ["\\n", "\\\"", "\t", "é"] {
                    var characters = Array(plain)
                    characters.replaceSubrange(offset..<(offset + 1), with: Array(special))
                    let text = String(characters)
                    let result = outcomes(NotificationPayload.self, #"{"notificationType":"\#(text)","notificationUUID":"u"}"#)
                    #expect(!result.fast, "\(special) at \(offset) of \(length)")
                    #expect(result.ours == result.foundation, "\(special) at \(offset) of \(length)")
                }
            }
        }
    }

    /// The decoded middle segment of a compact JWS.
    static func payload(of jws: String) throws -> Data {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        return try #require(parts.count == 3 ? Base64URL.decode(parts[1]) : nil)
    }
}
