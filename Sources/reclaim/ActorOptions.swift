import ArgumentParser

/// Who runs a privileged command, for the audit log (`reclaim audit`).
struct ActorOptions: ParsableArguments {
    @Option(help: "Who runs this, for the audit log; defaults to $RECLAIM_ACTOR, else the operating-system user (in the image always uid 10001).")
    var actor: String?
}
