-- wrk script: create pods with unique names (each wrk thread a prefix of its own).
local counter = 0
local prefix = string.format("b%d-", math.random(1, 1000000))
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

request = function()
  counter = counter + 1
  local body = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"' .. prefix .. counter ..
               '","labels":{"app":"bench"}},"spec":{"containers":[{"name":"c","image":"nginx",' ..
               '"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}'
  return wrk.format(nil, "/api/v1/namespaces/default/pods", nil, body)
end
