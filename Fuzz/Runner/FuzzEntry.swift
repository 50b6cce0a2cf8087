import Foundation
import ReclaimFuzzTargets

#if canImport(Glibc)
import Glibc
#endif

/// `reclaim-fuzz`: the fuzz targets of ``FuzzTarget``.
///
/// Built by `scripts/fuzz` with `-sanitize=fuzzer,address -DRECLAIM_LIBFUZZER`, it is a libFuzzer binary: the target
/// is named by `RECLAIM_FUZZ_TARGET`, every argument is libFuzzer's. Built normally, it replays inputs:
/// `reclaim-fuzz TARGET FILE|DIRECTORY...` runs each file through the target and says how many ran.
@main
struct FuzzEntry {
    static func main() {
        #if RECLAIM_LIBFUZZER
        guard let name = ProcessInfo.processInfo.environment["RECLAIM_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
            fail("set RECLAIM_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        selected = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            fail("usage: reclaim-fuzz TARGET FILE|DIRECTORY...; targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in files(at: path) {
                target.runBlocking(Array(FileManager.default.contents(atPath: file) ?? Data()))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs replayed, none crashed")
        #endif
    }

    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { fail("\(path) does not exist") }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("reclaim-fuzz: \(message)\n".utf8))
        exit(2)
    }
}

#if RECLAIM_LIBFUZZER
/// The target libFuzzer drives; set once before the driver starts.
nonisolated(unsafe) var selected = FuzzTarget.duration

/// libFuzzer's entry point. Its `main` (which SwiftPM's entry point takes the place of) calls this too.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected.runBlocking(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver (`FuzzerInterface.h`), for a `main` of our own.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
#endif
