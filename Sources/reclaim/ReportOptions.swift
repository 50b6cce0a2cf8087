import ArgumentParser

/// The options every report command shares (`campaigns report`, `refunds report`, `subscribers show`): the
/// environment, checked once here, and `--json` (``ReportJSON``'s one form). A command whose report has a default
/// environment says it in its own help and applies it to ``environment``'s nil.
struct ReportOptions: ParsableArguments {
    @Option(help: "Production or Sandbox (the command's help says its default).") var environment: String?
    @Flag(help: "JSON instead of text: pretty-printed, keys sorted (each command's help names its fields).") var json = false

    static let environments = ["Production", "Sandbox"]

    func validate() throws {
        if let environment, !Self.environments.contains(environment) {
            throw ValidationError("--environment must be Production or Sandbox")
        }
    }
}
