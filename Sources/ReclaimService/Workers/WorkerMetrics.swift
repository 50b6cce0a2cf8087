import Metrics
import ReclaimStore

/// The worker pool's metrics (swift-metrics; exported by /metrics).
struct WorkerMetrics: Sendable {
    let completedJobs = Counter(label: "reclaim_jobs_completed_total")
    let failedJobs = Counter(label: "reclaim_jobs_failed_total")
    let deadJobs = Counter(label: "reclaim_jobs_dead_total")
    let batchDuration = Metrics.Timer(label: "reclaim_job_batch_duration_seconds")
    let attempts = Recorder(label: "reclaim_job_attempts", aggregate: true)

    func completed(_ jobs: [Job], duration: Duration) {
        completedJobs.increment(by: jobs.count)
        batchDuration.recordNanoseconds(duration.nanoseconds)
        for job in jobs { attempts.record(job.attempt) }
    }

    func failed(_ job: Job, dead: Bool) {
        failedJobs.increment()
        if dead { deadJobs.increment() }
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
