import Foundation

extension UUID {
    /// The canonical 8-4-4-4-12 form in lowercase, as Apple's payloads carry nonces and appAccountTokens.
    /// Rendered by hand: `uuidString.lowercased()` costs about as much as building the rest of the payload.
    var lowercaseString: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var out = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    buffer[out] = hex[Int(byte >> 4)]
                    buffer[out + 1] = hex[Int(byte & 0x0F)]
                    out += 2
                }
                return out
            }
        }
    }
}
