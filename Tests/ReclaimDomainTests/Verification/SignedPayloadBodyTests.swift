import Foundation
import ReclaimTestSupport
import Testing

@testable import ReclaimDomain

/// `SignedPayloadBody.decode` reads `{"signedPayload":"<JWS>"}` straight from the bytes; it must agree with
/// JSONDecoder on every input, including the spellings that have to take the slow path.
@Suite(.poolWatchdog) struct SignedPayloadBodyTests {
    static func viaJSONDecoder(_ text: String) -> String? {
        try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(text.utf8)).signedPayload
    }

    @Test("every real body reads the same as with JSONDecoder")
    func realBodies() throws {
        for fixture in try AppleSandboxFixtures.all() {
            #expect(SignedPayloadBody.decode(fixture.body)?.signedPayload == fixture.signedPayload, "\(fixture.name)")
        }
    }

    @Test("every real body takes the direct path, not JSONDecoder")
    func realBodiesReadDirectly() throws {
        for fixture in try AppleSandboxFixtures.all() {
            let direct = Array(fixture.body).withUnsafeBytes { SignedPayloadBody.directForm($0) }
            #expect(direct?.signedPayload == fixture.signedPayload, "\(fixture.name)")
        }
    }

    @Test(
        "the direct path takes JSON's whitespace between tokens and nothing else",
        arguments: [
            (#"{"signedPayload":"a.b.c"}"#, true),
            (" \t{\r\n\"signedPayload\" :\t\"a.b.c\"\n} \n", true),
            (#"{"signedPayload":"a\/b"}"#, false),
            ("{\"signedPayload\":\"a.b.c\"}\u{0C}", false),
            ("\u{A0}{\"signedPayload\":\"a.b.c\"}", false),
            (#"{"signedPayload":"a.b.c","x":1}"#, false),
        ]
    )
    func directPath(_ text: String, direct: Bool) {
        let read = Array(text.utf8).withUnsafeBytes { SignedPayloadBody.directForm($0) }
        #expect((read != nil) == direct)
        if let read { #expect(read.signedPayload == Self.viaJSONDecoder(text)) }
    }

    @Test(
        "agrees with JSONDecoder on other spellings and on bodies that are not such an object",
        arguments: [
            #"{"signedPayload":"aGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            "{\"signedPayload\":\"aGVhZGVy.cGF5bG9hZA.c2ln\"}\r\n",
            #"{ "signedPayload" : "aGVhZGVy.cGF5bG9hZA.c2ln" }"#,
            "\n\t{\"signedPayload\":\r\"aGVhZGVy.cGF5bG9hZA.c2ln\"\n}",
            "{\"signedPayload\":\"aGVhZGVy.cGF5bG9hZA.c2ln\"}\u{0C}",
            #"{"signedPayload" "aGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload"::"aGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload":"aGVh\/ZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload":"aGVh\u005fZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload":"a","other":"b"}"#,
            #"{"signedPayload":"a\"b"}"#,
            #"{"signedPayload":"a b"}"#,
            #"{"signedPayload":"not a JWS! but plain text"}"#,
            #"{"signedPayload":"aGVhZGVyaGVhZGVyaGVhZGVy\\aGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload":"aGVhZGVyaGVhZGVyaGVhZGVy\naGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            "{\"signedPayload\":\"aGVhZGVyaGVhZGVyaGVhZGVy\taGVhZGVy.cGF5bG9hZA.c2ln\"}",
            #"{"signedPayload":"aGVhZGVyaGVhZGVyaGVhZGVyéaGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            #"{"signedPayload":""}"#,
            #"{"signedPayload":"abc"#,
            #"{"signedPayload":"abc"}}"#,
            #"{"signedPayload":1}"#,
            #"{"other":"abc"}"#,
            "[]",
            "",
            "not json",
        ]
    )
    func agreesWithJSONDecoder(_ text: String) {
        #expect(SignedPayloadBody.decode(Data(text.utf8))?.signedPayload == Self.viaJSONDecoder(text))
    }
}
