-- wrk's summary as one line of JSON for the bench scripts: requests/s, p50/p99 (ms), failures.
-- Used on its own (`wrk -s wrk-report.lua`, e.g. for /healthz) and by the scripts that dofile() it.
function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format('{"requests":%d,"per_s":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"non_2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
