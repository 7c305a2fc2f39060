// A parameter-server stand-in for benchmarks, on the same reactor as uvsched
// so it is not the bottleneck: answers 200 to everything and counts what it
// got; GET /stats tells the counts.
//   ps_stub --listen 127.0.0.1:10300
#include <uv.h>

#include <cstdio>
#include <string>

#include "reactor/http_server.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/url.h"

namespace {

class Counter final : public uvsched::RequestHandler {
 public:
  void handle(uvsched::HttpRequest& req, uvsched::Responder res) override {
    uvsched::HttpResponse r;
    std::string_view path = req.path();
    if (path == "/stats") {
      r.content_type = "application/json";
      r.body = "{\"start\":" + std::to_string(starts_) + ",\"update\":" + std::to_string(updates_) + "}";
    } else if (path == "/start") {
      ++starts_;
    } else if (path.rfind("/update/", 0) == 0) {
      ++updates_;
    }
    res.send(std::move(r));
  }

 private:
  uint64_t starts_ = 0;
  uint64_t updates_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string listen = argc == 3 && std::string(argv[1]) == "--listen" ? argv[2] : "127.0.0.1:10300";
  auto hp = uvsched::parse_host_port(listen);
  if (!hp) {
    fprintf(stderr, "usage: ps_stub --listen HOST:PORT\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  uvsched::log_configure(uvsched::LogLevel::kWarn, uvsched::LogFormat::kText);
  uv_loop_t* loop = uv_default_loop();
  uvsched::LoopClock clock(loop);
  Counter counter;
  uvsched::HttpServer server(loop, clock, uvsched::ServerLimits{}, counter);
  if (int rc = server.listen(hp->first, hp->second); rc != 0) {
    fprintf(stderr, "ps_stub: %s\n", uv_strerror(rc));
    return 1;
  }
  fprintf(stderr, "ps_stub listening on %s:%u\n", hp->first.c_str(), server.port());
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
