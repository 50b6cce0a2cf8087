/// The states of `reclaim.jobs.state`.
public enum JobState: String, Sendable, CaseIterable {
    case available, running, retryable, completed, dead
}
