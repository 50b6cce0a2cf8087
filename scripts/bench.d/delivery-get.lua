-- wrk script for `scripts/bench delivery`: GET /v1/offers for a realistic mix of app launches. One in
-- HIT_EVERY asks for a subscriber who has an offer (a line of the tokens file), the others for an
-- unknown appAccountToken (most launches: no offer). PAUSE_MS paces each connection (0: as fast as it can).
-- Usage: wrk … -s delivery-get.lua URL -- TOKENS_FILE APP_KEY HIT_EVERY PAUSE_MS

function init(args)
  tokens = {}
  for line in io.lines(args[1]) do tokens[#tokens + 1] = line end
  headers = { ["Authorization"] = "Bearer " .. args[2] }
  hit_every = tonumber(args[3])
  pause = tonumber(args[4])
  counter = 0
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end

local function random_uuid()
  return string.format("%08x-%04x-4%03x-8%03x-%012x", math.random(0, 0xffffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), math.random(0, 0xfff), math.random(0, 0xffffffffffff))
end

function delay() return pause end

function request()
  counter = counter + 1
  local token
  if counter % hit_every == 0 then token = tokens[math.random(1, #tokens)] else token = random_uuid() end
  return wrk.format("GET", "/v1/offers?appAccountToken=" .. token, headers)
end

dofile("scripts/bench.d/wrk-report.lua")  -- done(): the JSON summary line
