// The throw-away CA and the embedded PostgreSQL live in ReclaimDev (`reclaim dev` uses them too); every test
// target that imports its support gets them.
@_exported import ReclaimDev
