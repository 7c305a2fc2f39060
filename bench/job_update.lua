-- wrk script: POST /job epoch reports for many jobs (KubeML's TrainTask shape).
local jobs = tonumber(os.getenv("JOBS") or "1000")
local counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

request = function()
  counter = counter + 1
  local id = string.format("j%07d", counter % jobs)
  local elapsed = 8 + (counter % 7)
  local body = '{"request":{"model_type":"resnet","batch_size":64,"epochs":10,"dataset":"cifar10",' ..
               '"lr":0.01,"function_name":"resnet","options":{"default_parallelism":2}},' ..
               '"job":{"id":"' .. id .. '","state":{"parallelism":3,"elapsed_time":' .. elapsed .. '}}}'
  return wrk.format(nil, "/job", nil, body)
end
