import Foundation
import ReclaimDomain

/// The real notifications from Apple's sandbox in `Tests/Fixtures/apple-sandbox-notifications`.
public enum AppleSandboxFixtures {
    public struct Notification: Sendable {
        /// File name without `.json`, `TYPE[_SUBTYPE]_UUID`.
        public let name: String
        public let body: Data
        public let signedPayload: String

        /// The notificationUUID in the file name.
        public var uuid: String { String(name.suffix(36)) }
    }

    public static let bundleId = "GeniusParentingAI"
    public static let appAppleId: Int64 = 6_747_332_178

    /// Found by walking up from this file; both the path as compiled and with symlinks resolved are tried,
    /// because a scratch package may reach these sources through a symlink.
    public static let directory: URL? = {
        let file = URL(fileURLWithPath: #filePath)
        for start in [file, file.resolvingSymlinksInPath()] {
            var folder = start.deletingLastPathComponent()
            while folder.path != "/" {
                let candidate = folder.appendingPathComponent("Fixtures/apple-sandbox-notifications")
                if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
                folder = folder.deletingLastPathComponent()
            }
        }
        return nil
    }()

    /// Every notification, sorted by file name.
    public static func all() throws -> [Notification] {
        guard let directory else { throw FixtureMissing() }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
        return try names.map { file in
            let body = try Data(contentsOf: directory.appendingPathComponent(file))
            let signedPayload = try JSONDecoder().decode(SignedPayloadBody.self, from: body).signedPayload
            return Notification(name: String(file.dropLast(5)), body: body, signedPayload: signedPayload)
        }
    }

    /// The first notification whose file name starts with `prefix`.
    public static func first(_ prefix: String) throws -> Notification {
        guard let found = try all().first(where: { $0.name.hasPrefix(prefix) }) else { throw FixtureMissing() }
        return found
    }

    public struct FixtureMissing: Error {}
}
