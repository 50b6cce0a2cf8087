import ArgumentParser
import ReclaimService

/// `--role` takes a `ServerRole` by its raw value.
extension ServerRole: ExpressibleByArgument {}
