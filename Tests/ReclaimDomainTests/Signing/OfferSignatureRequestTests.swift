import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

/// The StoreKit 1 payload, byte for byte, and the inputs it refuses.
@Suite(.poolWatchdog) struct OfferSignatureRequestTests {
    static let nonce = UUID(uuidString: "6BA7B810-9DAD-41D1-80B4-00C04FD430C8")!

    static func request(
        bundle: String = "com.example.reclaim",
        keyId: String = SigningFixtures.keyId,
        product: String = "com.example.pro.monthly",
        offer: String = "winback50",
        username: String = "",
        timestamp: Int64 = 1_700_000_000_000
    ) -> OfferSignatureRequest {
        OfferSignatureRequest(
            appBundleId: bundle,
            keyIdentifier: keyId,
            productIdentifier: product,
            offerIdentifier: offer,
            applicationUsername: username,
            nonce: nonce,
            timestamp: timestamp
        )
    }

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    // Expected bytes computed independently in Python: "\u2063".join(fields).encode().hex()

    @Test func asciiPayloadWithEmptyApplicationUsername() throws {
        let payload = try Self.request().payload()
        #expect(
            hex(payload)
                == "636f6d2e6578616d706c652e7265636c61696de281a35245434c41494d303031e281a3636f6d2e6578616d706c652e70726f2e6d6f6e74686c79e281a377696e6261636b3530e281a3e281a336626137623831302d396461642d343164312d383062342d303063303466643433306338e281a331373030303030303030303030"
        )
        #expect(
            try Self.request().payloadString()
                == "com.example.reclaim\u{2063}RECLAIM001\u{2063}com.example.pro.monthly\u{2063}winback50\u{2063}\u{2063}6ba7b810-9dad-41d1-80b4-00c04fd430c8\u{2063}1700000000000"
        )
    }

    @Test func nonASCIIProductAndOffer() throws {
        let payload = try Self.request(product: "com.example.pro.über", offer: "réduction-50-🎉", username: "user-42", timestamp: 1_700_000_000_123)
            .payload()
        #expect(
            hex(payload)
                == "636f6d2e6578616d706c652e7265636c61696de281a35245434c41494d303031e281a3636f6d2e6578616d706c652e70726f2ec3bc626572e281a372c3a964756374696f6e2d35302df09f8e89e281a3757365722d3432e281a336626137623831302d396461642d343164312d383062342d303063303466643433306338e281a331373030303030303030313233"
        )
    }

    @Test func uppercaseAppAccountTokenIsRenderedLowercase() throws {
        let request = Self.request(username: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(request.renderedApplicationUsername == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(
            hex(try request.payload())
                == "636f6d2e6578616d706c652e7265636c61696de281a35245434c41494d303031e281a3636f6d2e6578616d706c652e70726f2e6d6f6e74686c79e281a377696e6261636b3530e281a365363231653166382d633336632d343935612d393366632d306332343761336536653566e281a336626137623831302d396461642d343164312d383062342d303063303466643433306338e281a331373030303030303030303030"
        )
    }

    @Test func nonUUIDApplicationUsernameIsVerbatim() {
        #expect(Self.request(username: "Alice-ABC").renderedApplicationUsername == "Alice-ABC")
    }

    @Test func stringNonceAcceptsEitherCaseAndRendersLowercase() throws {
        let request = try OfferSignatureRequest(
            appBundleId: "com.example.reclaim",
            keyIdentifier: SigningFixtures.keyId,
            productIdentifier: "p",
            offerIdentifier: "o",
            applicationUsername: "",
            nonce: "6BA7B810-9DAD-41D1-80B4-00C04FD430C8",
            timestamp: 1_700_000_000_000
        )
        #expect(request.renderedNonce == "6ba7b810-9dad-41d1-80b4-00c04fd430c8")
    }

    @Test func dateConvenienceTruncatesToMilliseconds() {
        let request = OfferSignatureRequest(
            appBundleId: "b",
            keyIdentifier: "k",
            productIdentifier: "p",
            offerIdentifier: "o",
            applicationUsername: "",
            nonce: Self.nonce,
            now: Date(timeIntervalSince1970: 1_700_000_000.1239)
        )
        #expect(request.timestamp == 1_700_000_000_123)
    }

    @Test(arguments: [
        ("empty bundle id", request(bundle: ""), OfferSigningError.Code.emptyBundleId),
        ("empty key id", request(keyId: ""), .emptyKeyIdentifier),
        ("empty product", request(product: ""), .emptyProductIdentifier),
        ("empty offer", request(offer: ""), .emptyOfferIdentifier),
        ("separator in bundle id", request(bundle: "com.example\u{2063}x"), .containsSeparator),
        ("separator in key id", request(keyId: "RECLAIM\u{2063}01"), .containsSeparator),
        ("separator in product", request(product: "p\u{2063}"), .containsSeparator),
        ("separator in offer", request(offer: "\u{2063}o"), .containsSeparator),
        ("separator in username", request(username: "alice\u{2063}bob"), .containsSeparator),
        ("timestamp in seconds", request(timestamp: 1_700_000_000), .timestampNotMilliseconds),
        ("timestamp zero", request(timestamp: 0), .timestampNotMilliseconds),
        ("timestamp negative", request(timestamp: -1_700_000_000_000), .timestampNotMilliseconds),
        ("timestamp in microseconds", request(timestamp: 1_700_000_000_000_000), .timestampNotMilliseconds),
    ])
    func refusesBadInput(name: String, request: OfferSignatureRequest, code: OfferSigningError.Code) {
        do {
            _ = try request.payload()
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
        }
    }

    @Test(arguments: [
        "", "not-a-uuid", "6ba7b810-9dad-41d1-80b4-00c04fd430c", "6ba7b8109dad41d180b400c04fd430c8", "{6ba7b810-9dad-41d1-80b4-00c04fd430c8}",
    ])
    func refusesNoncesThatAreNotUUIDs(nonce: String) {
        do {
            _ = try OfferSignatureRequest(
                appBundleId: "b",
                keyIdentifier: "k",
                productIdentifier: "p",
                offerIdentifier: "o",
                applicationUsername: "",
                nonce: nonce,
                timestamp: 1_700_000_000_000
            )
            Issue.record("accepted nonce \(nonce.debugDescription)")
        } catch {
            #expect(error.code == .invalidNonce)
            #expect(error.field == "nonce")
        }
    }
}

/// The hand-rolled lowercase UUID rendering agrees with Foundation's.
@Suite(.poolWatchdog) struct UUIDRenderingTests {
    @Test func matchesFoundationLowercased() {
        for _ in 0..<1000 {
            let uuid = UUID()
            let request = OfferSignatureRequestTests.request(username: uuid.uuidString)
            #expect(request.renderedApplicationUsername == uuid.uuidString.lowercased())
            var withNonce = request
            withNonce.nonce = uuid
            #expect(withNonce.renderedNonce == uuid.uuidString.lowercased())
        }
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        #expect(
            OfferSignatureRequest(
                appBundleId: "b",
                keyIdentifier: "k",
                productIdentifier: "p",
                offerIdentifier: "o",
                applicationUsername: "",
                nonce: zero,
                timestamp: 1_700_000_000_000
            ).renderedNonce == "00000000-0000-0000-0000-000000000000"
        )
    }
}
