-- wrk script for `scripts/bench ingest`: every wrk thread posts its own share of the pre-signed
-- bodies (one per line of the file given as the first script argument), each body once, so every
-- request is a new notification the server must verify and commit.
-- Usage: wrk -t T -c C -d D -s ingest-post.lua URL -- BODIES_FILE T

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  local path, count = args[1], tonumber(args[2])
  bodies = {}
  local line_number = 0
  for line in io.lines(path) do
    if line_number % count == id then bodies[#bodies + 1] = line end
    line_number = line_number + 1
  end
  next_body = 0
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  next_body = next_body + 1
  if next_body > #bodies then
    -- Out of bodies: repeat them (Apple's retries look the same). The benchmark counts stored rows,
    -- so repeats add nothing to its figure; the script warns when this happened.
    next_body = 1
    exhausted = true
  end
  return wrk.format("POST", "/v1/apple/notifications", headers, bodies[next_body])
end

-- One line of JSON for ingest.sh: latency percentiles (ms), and what went wrong, if anything.
function done(summary, latency, requests)
  local exhausted = false
  for _, thread in ipairs(threads) do
    if thread:get("exhausted") then exhausted = true end
  end
  local errors = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_s":%.3f,"p50_ms":%.2f,"p99_ms":%.2f,"non_2xx":%d,"socket_errors":%d,"exhausted":%s}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    errors.status, errors.connect + errors.read + errors.write + errors.timeout, tostring(exhausted)))
end
