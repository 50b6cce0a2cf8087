import Foundation
import ReclaimDomain

/// Test keys made once with openssl (`ecparam -genkey`, `pkcs8 -topk8`, `genpkey`); they sign nothing real.
enum SigningFixtures {
    static let keyId = "RECLAIM001"

    /// P-256, PKCS#8, as App Store Connect ships a `.p8`.
    static let p256PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg33L6bjX9jKlWv6n5
        Fzuo8bn+wW2+KamXAAHwVyNIbUihRANCAARVT4nz+f8rqNSEzYQEaL8hIOWvVpe8
        JHlAqz7CDNmLRxbGR5yrMfmp1UIWrlgUSYBXK3MH9gXT9eBHYKZ/lqJy
        -----END PRIVATE KEY-----

        """

    /// The same key as SEC1 (`openssl ecparam -genkey -noout`).
    static let p256SEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIN9y+m41/YypVr+p+Rc7qPG5/sFtvimplwAB8FcjSG1IoAoGCCqGSM49
        AwEHoUQDQgAEVU+J8/n/K6jUhM2EBGi/ISDlr1aXvCR5QKs+wgzZi0cWxkecqzH5
        qdVCFq5YFEmAVytzB/YF0/XgR2Cmf5aicg==
        -----END EC PRIVATE KEY-----

        """

    /// Its public key, from `openssl pkey -pubout`.
    static let p256Public = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEVU+J8/n/K6jUhM2EBGi/ISDlr1aX
        vCR5QKs+wgzZi0cWxkecqzH5qdVCFq5YFEmAVytzB/YF0/XgR2Cmf5aicg==
        -----END PUBLIC KEY-----

        """

    /// Its private scalar in hex, from `openssl asn1parse`; must never appear in a message.
    static let p256ScalarHex = "df72fa6e35fd8ca956bfa9f9173ba8f1b9fec16dbe29a9970001f05723486d48"

    /// The same key in PKCS#8, encrypted with password "test" (`openssl pkcs8 -topk8 -v2 aes-256-cbc`).
    static let p256EncryptedPKCS8 = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAiCDj3OGkteSgICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEPCMIquDwgnlxwzdKNloB7oEgZCU
        7wj4arS2sdOSgP72P1uPjnDyTcEDQfJygfz5YOC0yZfuyHgEu47E7yPdRNyRlkNa
        /pn1MT3Z1LcKKgk8yoW7PXkMv3wCfmxEltPNyLwWLQ0sc10FT4IfdND1Bfud8e9m
        ciivbAkESotOF6GEpY8S7Kzhm1AnWm1a2Cy9AkEij6PqIwDAmHSDVnyXEqLhsco=
        -----END ENCRYPTED PRIVATE KEY-----

        """

    /// The same key, SEC1 with legacy OpenSSL encryption (`openssl ec -aes256`).
    static let p256EncryptedSEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        Proc-Type: 4,ENCRYPTED
        DEK-Info: AES-256-CBC,430EE95B08189719AFBAFD6143733D3B

        8VeVzmMipqlJhwR+pERyST3qUoy8dD3di6jP3tEUpWMw84BhYdO9iVxH8IwFxEuy
        CROOXvIk3Gt5R7hz57RY528cLKGXaBdqtGZ/6IFaoqp0alg5GdOWqVR5PRwdwVz1
        xENDUzbacRxqnPkJor/LnDlaHkk4IlGhFm9hWL563NE=
        -----END EC PRIVATE KEY-----

        """

    /// RSA 512 (PKCS#8), `openssl genpkey -algorithm RSA`.
    static let rsaPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEAvVs4gov062Jh4Div
        pj/3zCEIdMVsvjRpNDp1c2WZPWKu8Uas4GJCb6RumY1/t91H2EPJt0l7PXPkDVW0
        py2q1QIDAQABAkA1usCaKmRgthXXrb4JinUhsu3XVH26qtx/OWdCSz3kMLL3KgCs
        f8py+8D4vT+r83TJ29PYSLHnYNepdUfivrqxAiEA7HHreoJemAHigttJEpflxN89
        mheAPRMCKEj+wCuOH/MCIQDNBFOLe+iWgwmd7cIiqN83rhJG6lZmo1Sd8d2umrME
        FwIgVhbsfEC3nHUjOi4JnyF7YYE+9roT0Sj4oh5h0yqIpw0CIQC4r7MLLl5CaF0b
        dfmy+2nKYPd6BtQ6tdweRKotBpNJlQIhAIO4Bgc9Kka2sMIK+hw77pBieJhMnH27
        qe5S/1auJAfY
        -----END PRIVATE KEY-----

        """

    /// The same RSA key as PKCS#1 (`openssl rsa -traditional`).
    static let rsaPKCS1 = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIBOwIBAAJBAL1bOIKL9OtiYeA4r6Y/98whCHTFbL40aTQ6dXNlmT1irvFGrOBi
        Qm+kbpmNf7fdR9hDybdJez1z5A1VtKctqtUCAwEAAQJANbrAmipkYLYV162+CYp1
        IbLt11R9uqrcfzlnQks95DCy9yoArH/KcvvA+L0/q/N0ydvT2Eix52DXqXVH4r66
        sQIhAOxx63qCXpgB4oLbSRKX5cTfPZoXgD0TAihI/sArjh/zAiEAzQRTi3voloMJ
        ne3CIqjfN64SRupWZqNUnfHdrpqzBBcCIFYW7HxAt5x1IzouCZ8he2GBPva6E9Eo
        +KIeYdMqiKcNAiEAuK+zCy5eQmhdG3X5svtpymD3egbUOrXcHkSqLQaTSZUCIQCD
        uAYHPSpGtrDCCvocO+6QYniYTJx9u6nuUv9WriQH2A==
        -----END RSA PRIVATE KEY-----

        """

    /// secp256k1 (PKCS#8): same key size as P-256, so only the curve OID tells them apart.
    static let secp256k1PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQglIXj8++BCYqnDxV57gu1
        OLB0j7KIKmmQ02ZFY2zNHGuhRANCAAREZE07Pdj+RlIqMul18vCCiQFgIWq0EhbU
        9VlRhdLvFy5VCMBNAySoEJyITAiKhsS0CthUv4kMrPmn85PgGo0u
        -----END PRIVATE KEY-----

        """

    /// The same secp256k1 key as SEC1.
    static let secp256k1SEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHQCAQEEIJSF4/PvgQmKpw8Vee4LtTiwdI+yiCppkNNmRWNszRxroAcGBSuBBAAK
        oUQDQgAERGRNOz3Y/kZSKjLpdfLwgokBYCFqtBIW1PVZUYXS7xcuVQjATQMkqBCc
        iEwIiobEtArYVL+JDKz5p/OT4BqNLg==
        -----END EC PRIVATE KEY-----

        """

    /// P-384 (PKCS#8).
    static let p384PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDC6OgtSR3CuxMY0lOUg
        Ly35w2LLxoyNdb6AnwNkC+qvYsrBpN3804R5EqsubLiby2+hZANiAAQYyd+dDKlJ
        v8AFoQJaudOOBvbHXe2eeIPwJbNV7Zsc6ruh8h94aVDn4bUCDyNgeQjvt7e9nH9Y
        rypXi47JgdM/prirZwpwsKRsGcJJqLnPFLdfh+IOry7oCTW7nmvg2cU=
        -----END PRIVATE KEY-----

        """

    /// Ed25519 (PKCS#8).
    static let ed25519PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIBOWq03UeM/DKDRA7IeUfyVfh31V5IsnWASS7+pJ7ZNp
        -----END PRIVATE KEY-----

        """

    /// The DER inside a PEM block, decoded independently of the code under test.
    static func der(_ pem: String) -> Data {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") && !$0.contains(":") }.joined()
        return Data(base64Encoded: body)!
    }

    /// The base64 body lines of a PEM block, none of which may appear in an error message.
    static func bodyLines(_ pem: String) -> [String] {
        pem.split(separator: "\n").filter { !$0.hasPrefix("-----") && !$0.contains(":") && $0.count > 8 }.map(String.init)
    }

    /// The fixed test key, loaded through the code under test.
    static func signingKey() throws -> SigningKey {
        try SigningKey.load(keyId: keyId, contents: Data(p256PKCS8.utf8), source: "fixtures/p256.p8")
    }
}
