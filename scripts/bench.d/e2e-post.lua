-- wrk script for `scripts/bench e2e`: like ingest-post.lua, every wrk thread posts its own share of
-- the pre-signed bodies (one per line of the file given as the first script argument), but each
-- body exactly once: when its share is handed out, a thread's connections fall idle, and e2e.sh
-- stops wrk (SIGINT) once the database holds what it waits for. Repeats would be duplicates the
-- server answers without new work, yet still cost it CPU the measured pipeline needs.
-- Usage: wrk -t T -c C -d BOUND -s e2e-post.lua URL -- BODIES_FILE T [PAUSE_MS]
-- PAUSE_MS paces the load: each connection waits that long before each of its requests, so C
-- connections offer at most C * 1000 / PAUSE_MS requests/s (less by the time each request takes).

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  local path, count = args[1], tonumber(args[2])
  pause = tonumber(args[3] or "0")
  bodies = {}
  local line_number = 0
  for line in io.lines(path) do
    if line_number % count == id then bodies[#bodies + 1] = line end
    line_number = line_number + 1
  end
  next_body = 0
  -- Bodies promised to connections by delay(), each fetched by the request() that follows.
  promised = 0
  headers = { ["Content-Type"] = "application/json" }
end

-- wrk asks before every request (the first included) how long the connection waits. Bodies are
-- promised here rather than counted in request(), because request() must return one: a connection
-- that got the go-ahead while bodies remained gets one; the others wait an hour (wrk is stopped,
-- or its -d bound ends it, long before).
function delay()
  if promised >= #bodies then return 3600000 end
  promised = promised + 1
  return pause
end

function request()
  -- Before starting the first thread, wrk calls request() once on its own to check the request
  -- (pipelining), before any delay(): that call sends nothing, so it takes no body.
  if promised == 0 then return wrk.format("POST", "/v1/apple/notifications", headers, bodies[1]) end
  next_body = next_body + 1
  if next_body > #bodies then
    -- Only after a reconnect, which wrk does on a socket error: repeat, and say so.
    next_body = 1
    exhausted = true
  end
  return wrk.format("POST", "/v1/apple/notifications", headers, bodies[next_body])
end

-- One line of JSON for e2e.sh: wrk's own latency percentiles (ms, from request written to response
-- read), and what went wrong, if anything.
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
