// A program that embeds uvsched on its own libuv loop, built against the
// installed library:
//   c++ -std=c++20 main.cc $(pkg-config --cflags --libs uvsched) -o embed
// It starts the scheduler on a free loopback port with its store in DIR, adds
// a route of its own, asks both the scheduler's /healthz and its route with
// uvsched's HTTP client on the same loop, stops the scheduler, and exits 0
// when every answer was right and the loop was left clean.
//   ./embed DIR
#include <signal.h>
#include <uv.h>

#include <cstdio>
#include <string>

#include "app/daemon.h"
#include "reactor/http_client.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: embed DIR (the scheduler's store goes there)\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // libuv writes with write(2)
  uvsched::log_configure(uvsched::LogLevel::kWarn, uvsched::LogFormat::kText);
  uv_loop_t loop;
  uv_loop_init(&loop);
  int failures = 0;
  {
    uvsched::Config config;
    config.listen_port = 0;  // any free port
    config.store = std::string("embedded:") + argv[1];
    uvsched::Daemon daemon(&loop, config);
    if (int rc = daemon.start(); rc != 0) {
      fprintf(stderr, "embed: uvsched did not start: %s\n", uv_strerror(rc));
      return 1;
    }
    daemon.router().add("GET", "/mine", [](uvsched::RequestContext& ctx) {
      uvsched::HttpResponse r;
      r.body = "the host's own route";
      ctx.reply(std::move(r));
    });
    uvsched::LoopClock clock(&loop);
    uvsched::HttpClient client(&loop, clock);
    const std::string base = "http://127.0.0.1:" + std::to_string(daemon.port());
    client.request({.method = "GET", .url = base + "/healthz"}, [&](uvsched::ClientResponse&& health) {
      printf("GET /healthz: %d %s\n", health.status, health.body.c_str());
      failures += health.status == 200 ? 0 : 1;
      client.request({.method = "GET", .url = base + "/mine"}, [&](uvsched::ClientResponse&& mine) {
        printf("GET /mine: %d %s\n", mine.status, mine.body.c_str());
        failures += mine.body == "the host's own route" ? 0 : 1;
        client.close([] {});
        daemon.stop([] { printf("uvsched stopped\n"); });
      });
    });
    uv_run(&loop, UV_RUN_DEFAULT);  // returns once every handle is closed
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&loop) != 0) {
    fprintf(stderr, "embed: handles were left on the loop\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
