import Foundation
import ReclaimDomain
import ReclaimTestSupport
import Testing

@Suite(.poolWatchdog) struct ModelDecodingTests {
    @Test func unknownValuesSurviveARoundTrip() throws {
        let json = Data(
            """
            {"notificationType":"SOMETHING_NEW","subtype":"EVEN_NEWER","notificationUUID":"u","version":"3.0",
             "signedDate":1753852003116,"data":{"environment":"Moon","appAppleId":6747332178,"bundleId":"b","status":9}}
            """.utf8
        )
        let payload = try JSONDecoder().decode(NotificationPayload.self, from: json)
        #expect(payload.notificationType == "SOMETHING_NEW")
        #expect(payload.subtype?.rawValue == "EVEN_NEWER")
        #expect(payload.environment == AppStoreEnvironment(rawValue: "Moon"))
        #expect(payload.data?.status == 9)
        let again = try JSONDecoder().decode(NotificationPayload.self, from: try JSONEncoder().encode(payload))
        #expect(again == payload)
        // The wire form of an open enum is the bare string.
        #expect(String(decoding: try JSONEncoder().encode(NotificationType.didRenew), as: UTF8.self) == "\"DID_RENEW\"")
    }

    @Test func signedDateIsOptional() throws {
        let payload = try JSONDecoder().decode(
            NotificationPayload.self,
            from: Data(#"{"notificationType":"TEST","notificationUUID":"u"}"#.utf8)
        )
        #expect(payload.signedDate == nil)
        #expect(payload.bundleId == nil)
        #expect(payload.environment == nil)
    }

    @Test func otherBodiesNameTheirApp() throws {
        let summary = try JSONDecoder().decode(
            NotificationPayload.self,
            from: Data(
                """
                {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u",
                 "summary":{"environment":"Production","appAppleId":1,"bundleId":"b","storefrontCountryCodes":["USA"],"succeededCount":5,"failedCount":0}}
                """.utf8
            )
        )
        #expect(summary.bundleId == "b" && summary.appAppleId == 1 && summary.environment == .production)
        let token = try JSONDecoder().decode(
            NotificationPayload.self,
            from: Data(
                """
                {"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED","notificationUUID":"u",
                 "externalPurchaseToken":{"externalPurchaseId":"SANDBOX_1","tokenCreationDate":1,"appAppleId":2,"bundleId":"c"}}
                """.utf8
            )
        )
        #expect(token.bundleId == "c" && token.environment == .sandbox)
    }

    @Test func transactionAndRenewalFieldsDecode() throws {
        let transaction = try JSONDecoder().decode(
            TransactionInfo.self,
            from: Data(
                """
                {"transactionId":"2","originalTransactionId":"1","price":9990,"quantity":1,"offerType":2,"offerIdentifier":"RETAIN50",
                 "isUpgraded":true,"revocationPercentage":50000,"environment":"Production","offerPeriod":"P1M"}
                """.utf8
            )
        )
        #expect(transaction.price == 9990 && transaction.offerType == 2 && transaction.isUpgraded == true)
        let renewal = try JSONDecoder().decode(
            RenewalInfo.self,
            from: Data(
                """
                {"autoRenewStatus":0,"expirationIntent":1,"eligibleWinBackOfferIds":["a","b"],"isInBillingRetryPeriod":false}
                """.utf8
            )
        )
        #expect(renewal.autoRenewStatus == 0 && renewal.eligibleWinBackOfferIds == ["a", "b"])
    }

    @Test func realtimeRequestRequiresEveryField() throws {
        let full =
            #"{"originalTransactionId":"1","appAppleId":2,"productId":"p","userLocale":"en-US","requestIdentifier":"r","signedDate":3,"environment":"Sandbox"}"#
        #expect(try JSONDecoder().decode(RealtimeRequest.self, from: Data(full.utf8)).appAppleId == 2)
        let partial = #"{"originalTransactionId":"1","appAppleId":2}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RealtimeRequest.self, from: Data(partial.utf8)) }
    }
}
