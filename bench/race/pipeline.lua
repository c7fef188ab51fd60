-- wrk: DEPTH requests per write on every connection (HTTP/1.1 pipelining).
-- wrk -s pipeline.lua URL -- DEPTH   (default 16)
-- wrk counts each response, so requests/s counts requests, not batches.
local depth = 16

function init(args)
  depth = tonumber(args[1]) or depth
  local batch = {}
  for i = 1, depth do
    batch[i] = wrk.format()
  end
  req = table.concat(batch)
end

function request()
  return req
end
