// uvsched as a library on a loop the embedding program owns: start it, talk
// to it with the program's own client on the same loop, stop it, and the
// loop is left with nothing of uvsched's.
#include <gtest/gtest.h>

#include "app/daemon.h"
#include "reactor/http_client.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "tests/support/store_fixture.h"

namespace uvsched {
namespace {

TEST(Embed, DaemonRunsOnTheHostLoopAndLeavesItClean) {
  log_configure(LogLevel::kOff, LogFormat::kText);
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    test::TempDir dir;
    Config config;
    config.listen_port = 0;
    config.store = "embedded:" + dir.path() + "/data";
    Daemon daemon(&loop, config);
    ASSERT_EQ(daemon.start(), 0);
    ASSERT_NE(daemon.port(), 0);
    daemon.router().add("GET", "/host-route", [](RequestContext& ctx) {
      HttpResponse r;
      r.body = "from the host";
      ctx.reply(std::move(r));
    });

    LoopClock clock(&loop);
    HttpClient client(&loop, clock);
    std::string base = "http://127.0.0.1:" + std::to_string(daemon.port());
    int status = 0;
    std::string host_body;
    bool stopped = false, client_closed = false;
    client.request({.method = "GET", .url = base + "/health"}, [&](ClientResponse&& r) {
      status = r.status;
      client.request({.method = "GET", .url = base + "/host-route"}, [&](ClientResponse&& r2) {
        host_body = r2.body;
        client.close([&] { client_closed = true; });
        daemon.stop([&] { stopped = true; });
      });
    });
    uv_run(&loop, UV_RUN_DEFAULT);  // returns only once every handle is closed
    EXPECT_EQ(status, 200);
    EXPECT_EQ(host_body, "from the host");
    EXPECT_TRUE(stopped);
    EXPECT_TRUE(client_closed);
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // close callbacks of handles released by destructors
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace uvsched
