-- wrk script of bench/http: BENCH_MODE is healthz (GET /healthz), get
-- (GET /pages/:id), getdraft (GET /pages/:id?include=draft), patch (PATCH /pages/:id, a new title), post (POST /pages,
-- a new page under the picked page, with a slug unique per thread and
-- request), delete (DELETE /pages/:id) or login (POST /oauth/token, the
-- password grant of BENCH_EMAIL with BENCH_PASSWORD: one argon2id check per
-- request); ids are read from the file BENCH_IDS, one per line, and picked
-- at random per request.
local mode = os.getenv("BENCH_MODE") or "healthz"
local token = os.getenv("BENCH_TOKEN") or ""
-- preview (GET /pages/:id?preview-release=BENCH_RELEASE) and getrelease
-- (GET /pages/:id) read the pages of the release's drafts (issue 29).
local release = os.getenv("BENCH_RELEASE") or ""
local ids = {}
local function urlencode(v)
  return (string.gsub(v, "[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end
local loginBody = "grant_type=password&username=" .. urlencode(os.getenv("BENCH_EMAIL") or "") ..
  "&password=" .. urlencode(os.getenv("BENCH_PASSWORD") or "")
if mode ~= "healthz" and mode ~= "login" then
  for line in io.lines(os.getenv("BENCH_IDS")) do
    if line ~= "" then ids[#ids + 1] = line end
  end
end

local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  threads[#threads + 1] = thread
end

local n = 0
function init(args)
  math.randomseed(os.time() * 1000 + (tid or 0))
end

function request()
  if mode == "healthz" then
    return wrk.format("GET", "/healthz")
  end
  if mode == "login" then
    return wrk.format("POST", "/oauth/token", { ["Content-Type"] = "application/x-www-form-urlencoded" }, loginBody)
  end
  local id = ids[math.random(#ids)]
  local headers = { ["Authorization"] = "Bearer " .. token, ["Accept"] = "application/vnd.api+json" }
  if mode == "patch" then
    n = n + 1
    headers["Content-Type"] = "application/vnd.api+json"
    local body = string.format('{"data":{"type":"pages","id":"%s","attributes":{"title":"Bench %d-%d"}}}', id, tid or 0, n)
    return wrk.format("PATCH", "/pages/" .. id, headers, body)
  end
  if mode == "post" then
    n = n + 1
    headers["Content-Type"] = "application/vnd.api+json"
    local body = string.format('{"data":{"type":"pages","attributes":{"title":"Bench %d-%d","slug":"bench-%d-%d-%d","page-type":"page"},' ..
      '"relationships":{"parent":{"data":{"type":"pages","id":"%s"}}}}}', tid or 0, n, os.time(), tid or 0, n, id)
    return wrk.format("POST", "/pages", headers, body)
  end
  if mode == "getdraft" then
    return wrk.format("GET", "/pages/" .. id .. "?include=draft", headers)
  end
  if mode == "preview" then
    return wrk.format("GET", "/pages/" .. id .. "?preview-release=" .. release, headers)
  end
  if mode == "delete" then
    return wrk.format("DELETE", "/pages/" .. id, headers)
  end
  return wrk.format("GET", "/pages/" .. id, headers)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50)))
end
