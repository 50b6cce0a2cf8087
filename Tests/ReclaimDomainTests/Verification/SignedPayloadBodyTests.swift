import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// `SignedPayloadBody.decode` reads Apple's compact form straight from the bytes; it must agree with
/// JSONDecoder on every input, including the spellings that have to take the slow path.
@Suite struct SignedPayloadBodyTests {
    static func viaJSONDecoder(_ text: String) -> String? {
        try? JSONDecoder().decode(SignedPayloadBody.self, from: Data(text.utf8)).signedPayload
    }

    @Test("every real body reads the same as with JSONDecoder")
    func realBodies() throws {
        for fixture in try AppleSandboxFixtures.all() {
            #expect(SignedPayloadBody.decode(fixture.body)?.signedPayload == fixture.signedPayload, "\(fixture.name)")
        }
    }

    @Test(
        "agrees with JSONDecoder on other spellings and on bodies that are not such an object",
        arguments: [
            #"{"signedPayload":"aGVhZGVy.cGF5bG9hZA.c2ln"}"#,
            "{\"signedPayload\":\"aGVhZGVy.cGF5bG9hZA.c2ln\"}\r\n",
            #"{ "signedPayload" : "aGVhZGVy.cGF5bG9hZA.c2ln" }"#,
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
