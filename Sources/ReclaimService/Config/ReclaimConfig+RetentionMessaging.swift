// `apps[].retentionMessaging`: the app's Retention Messaging set-up at Apple, kept in the config and applied with
// `reclaim messaging apply` (docs/campaigns.md, "Switching the cancel sheet on").
import Foundation
import ReclaimDomain

extension ReclaimConfig {
    /// The messages, images, default messages and realtime URL Apple should hold for an app.
    public struct RetentionMessaging: Decodable, Sendable {
        /// The app's `POST /v1/apple/retention-messaging` as Apple reaches it. Apple: "The realtimeURL must begin with
        /// https:// and be a maximum of 256 characters." The same URL is configured in each environment applied.
        public var realtimeURL: String?
        public var messages: [Message]
        public var defaults: [Default]

        enum CodingKeys: String, ConfigKeys { case realtimeURL, messages, defaults }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            realtimeURL = try container.decodeIfPresent(String.self, forKey: .realtimeURL)
            messages = try container.decodeIfPresent([Message].self, forKey: .messages) ?? []
            defaults = try container.decodeIfPresent([Default].self, forKey: .defaults) ?? []
            if let realtimeURL, !realtimeURL.hasPrefix("https://") || realtimeURL.count > 256 || URL(string: realtimeURL)?.host == nil {
                throw DecodingError.dataCorruptedError(
                    forKey: .realtimeURL,
                    in: container,
                    debugDescription: "\(realtimeURL): Apple takes an https:// URL of at most 256 characters"
                )
            }
            var ids = Set<String>()
            for message in messages where !ids.insert(message.id).inserted {
                throw DecodingError.dataCorruptedError(forKey: .messages, in: container, debugDescription: "message \(message.id) is listed twice")
            }
            var pairs = Set<String>()
            for entry in defaults {
                guard ids.contains(entry.message) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .defaults,
                        in: container,
                        debugDescription: "default for \(entry.productId) \(entry.locale): message \(entry.message) is not one of messages"
                    )
                }
                guard pairs.insert("\(entry.productId) \(entry.locale)").inserted else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .defaults,
                        in: container,
                        debugDescription: "\(entry.productId) \(entry.locale) has two defaults"
                    )
                }
            }
        }

        /// The locales the defaults name.
        public var locales: Set<String> { Set(defaults.map(\.locale)) }

        /// What Upload Image would refuse of each image file, naming the message and key.
        public func imageProblems() -> [String] {
            messages.flatMap { message in
                (message.image.map { $0.problems(size: .full, message: message.id, key: "image") } ?? [])
                    + message.bulletPoints.flatMap { $0.image.problems(size: .bullet, message: message.id, key: "bulletPoints.image") }
            }
        }
    }

    /// A text message, with an image or bullet points if given. Apple's limits, from Upload Message's
    /// `UploadMessageRequestBody`: header "Maximum length: 66", body "Maximum length: 144", alt text 150, bullet
    /// point text 66.
    public struct Message: Decodable, Sendable {
        public var id: String
        public var header: String
        public var body: String
        public var headerPosition: String?
        public var image: Image?
        public var bulletPoints: [BulletPoint]

        enum CodingKeys: String, ConfigKeys { case id, header, body, headerPosition, image, bulletPoints }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id).lowercased()
            header = try container.decode(String.self, forKey: .header)
            body = try container.decode(String.self, forKey: .body)
            headerPosition = try container.decodeIfPresent(String.self, forKey: .headerPosition)
            image = try container.decodeIfPresent(Image.self, forKey: .image)
            bulletPoints = try container.decodeIfPresent([BulletPoint].self, forKey: .bulletPoints) ?? []
            func refuse(_ key: CodingKeys, _ why: String) -> DecodingError {
                DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "message \(id): \(why)")
            }
            guard UUID(uuidString: id) != nil else { throw refuse(.id, "not a UUID (Apple's message identifiers are UUIDs)") }
            guard !header.isEmpty, header.count <= 66 else { throw refuse(.header, "\(header.count) characters; Apple takes 1 to 66") }
            guard !body.isEmpty, body.count <= 144 else { throw refuse(.body, "\(body.count) characters; Apple takes 1 to 144") }
            if let headerPosition {
                guard ["ABOVE_BODY", "ABOVE_IMAGE"].contains(headerPosition) else {
                    throw refuse(.headerPosition, "\(headerPosition): ABOVE_BODY or ABOVE_IMAGE")
                }
                // BadRequestAboveImageRequiresAnImageError (4000224).
                if headerPosition == "ABOVE_IMAGE" && image == nil { throw refuse(.headerPosition, "ABOVE_IMAGE needs an image") }
            }
            // Apple's Python library allows at most 5 (Apple's pages name BadRequestTooManyBulletPointsError, no number).
            guard bulletPoints.count <= 5 else { throw refuse(.bulletPoints, "\(bulletPoints.count) bullet points; at most 5") }
        }

        /// Apple's `UploadMessageRequestBody` for it.
        public var upload: AppStoreServerAPIClient.UploadMessage {
            AppStoreServerAPIClient.UploadMessage(
                header: header,
                body: body,
                image: image.map { .init(imageIdentifier: $0.id, altText: $0.altText) },
                bulletPoints: bulletPoints.isEmpty
                    ? nil : bulletPoints.map { .init(text: $0.text, imageIdentifier: $0.image.id, altText: $0.image.altText) },
                headerPosition: headerPosition
            )
        }

        /// Every image the message uses, with Apple's `imageSize` for it.
        public var images: [(image: Image, size: String)] {
            (image.map { [($0, "FULL_SIZE")] } ?? []) + bulletPoints.map { ($0.image, "BULLET_POINT") }
        }
    }

    /// An image: an identifier the operator chooses (so that apply stays idempotent), a PNG file, alternative text.
    public struct Image: Decodable, Sendable {
        public var id: String
        public var file: String
        public var altText: String

        enum CodingKeys: String, ConfigKeys { case id, file, altText }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id).lowercased()
            file = try container.decode(String.self, forKey: .file)
            altText = try container.decode(String.self, forKey: .altText)
            guard UUID(uuidString: id) != nil else {
                throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "\(id) is not a UUID")
            }
            guard !altText.isEmpty, altText.count <= 150 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .altText,
                    in: container,
                    debugDescription: "\(altText.count) characters; Apple takes 1 to 150"
                )
            }
        }

        enum Size { case full, bullet }

        /// What Upload Image would refuse of the file: Apple's Upload Image takes a PNG without transparency; a
        /// full-size image 3840 px wide and 160 to 2160 px high (inclusive), a bullet point's 1024 × 1024. Read when
        /// the images are about to be sent (`reclaim messaging`) and by `reclaim campaigns check`, not at start-up:
        /// `reclaim serve` never sends them.
        func problems(size: Size, message: String, key: String) -> [String] {
            let where_ = "message \(message) \(key) \(file)"
            let info: PNGHeader
            do { info = try PNGHeader(path: file) } catch { return ["\(where_): \(error)"] }
            var problems: [String] = []
            if info.hasTransparency { problems.append("\(where_): it has transparency (an alpha channel or tRNS); Apple takes none") }
            switch size {
            case .full where info.width != 3840 || !(160...2160).contains(info.height):
                problems.append("\(where_): \(info.width) × \(info.height) px; a message's image is 3840 px wide and 160 to 2160 px high")
            case .bullet where info.width != 1024 || info.height != 1024:
                problems.append("\(where_): \(info.width) × \(info.height) px; a bullet point's image is 1024 × 1024 px")
            default: break
            }
            return problems
        }
    }

    public struct BulletPoint: Decodable, Sendable {
        public var text: String
        public var image: Image

        enum CodingKeys: String, ConfigKeys { case text, image }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            text = try container.decode(String.self, forKey: .text)
            image = try container.decode(Image.self, forKey: .image)
            guard !text.isEmpty, text.count <= 66 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .text,
                    in: container,
                    debugDescription: "\(text.count) characters; Apple takes 1 to 66"
                )
            }
        }
    }

    /// Apple's default message for a product in a locale: "the system requires a default message for every product in
    /// each locale where you provide real-time retention messages".
    public struct Default: Decodable, Sendable {
        public var productId: String
        public var locale: String
        public var message: String

        enum CodingKeys: String, ConfigKeys { case productId, locale, message }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.configContainer(keyedBy: CodingKeys.self)
            productId = try container.decode(String.self, forKey: .productId)
            locale = try container.decode(String.self, forKey: .locale)
            message = try container.decode(String.self, forKey: .message).lowercased()
            // Apple's locale short codes: a language, optionally a script or region ("en-US", "zh-Hans", "fr").
            guard locale.wholeMatch(of: /[a-z]{2,3}(-[A-Za-z]{2,4})?(-[A-Z]{2})?/) != nil else {
                throw DecodingError.dataCorruptedError(forKey: .locale, in: container, debugDescription: "\(locale) is not a locale such as en-US")
            }
            guard !productId.isEmpty else { throw DecodingError.dataCorruptedError(forKey: .productId, in: container, debugDescription: "empty") }
        }
    }
}

/// What Upload Image checks of a PNG, read from its header: the signature, IHDR's size and colour type, and whether a
/// tRNS chunk comes before the image data.
struct PNGHeader {
    struct Problem: Error, CustomStringConvertible { let description: String }

    let width: Int
    let height: Int
    /// 4 (grey and alpha) and 6 (RGB and alpha) carry an alpha channel.
    let colorType: UInt8
    let hasTRNS: Bool

    var hasTransparency: Bool { colorType == 4 || colorType == 6 || hasTRNS }

    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "cannot read the file") }
        try self.init(data)
    }

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 33, bytes.prefix(8).elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw Problem(description: "not a PNG file")
        }
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        guard String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" else { throw Problem(description: "a PNG without IHDR first") }
        width = u32(16)
        height = u32(20)
        colorType = bytes[25]
        var offset = 8
        var trns = false
        while offset + 8 <= bytes.count {
            let length = u32(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if type == "tRNS" { trns = true }
            if type == "IDAT" || type == "IEND" { break }
            offset += 12 + length
        }
        hasTRNS = trns
    }
}
