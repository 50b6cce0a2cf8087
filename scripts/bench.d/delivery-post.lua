-- wrk script for `scripts/bench delivery`: POSTs the pre-signed bodies of a file (one per line) in turn,
-- for ever (Retention Messaging requests and /healthz are read-only: repeats cost the same as new ones).
-- PAUSE_MS (optional, default 0) paces each connection. Usage: wrk … -s delivery-post.lua URL -- BODIES_FILE PATH [PAUSE_MS]

-- Each wrk thread starts at its own offset in the file: two threads walking it in step would send each body twice at
-- once (for Retention Messaging, one subscriber's two requests racing for the first decision, which Apple does not do).
local threads = 0
function setup(thread)
  thread:set("offset", threads)
  threads = threads + 1
end

function init(args)
  bodies = {}
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  path = args[2]
  headers = { ["Content-Type"] = "application/json" }
  next_body = math.floor((offset or 0) * #bodies / 2)
  pause = tonumber(args[3] or "0")
end

function delay() return pause end

function request()
  next_body = next_body % #bodies + 1
  return wrk.format("POST", path, headers, bodies[next_body])
end

dofile("scripts/bench.d/wrk-report.lua")  -- done(): the JSON summary line
