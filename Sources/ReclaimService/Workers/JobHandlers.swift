import ReclaimStore

/// The job kinds this release handles, by kind.
func jobHandlers(_ dependencies: Dependencies) -> [String: any JobHandler] {
    [:]
}
