// The uvsched daemon: parse the configuration, run a Daemon on the default
// loop, stop gracefully on SIGINT/SIGTERM.
#include <uv.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/allocator.h"
#include "app/config.h"
#include "app/daemon.h"
#include "app/open_files.h"
#include "reactor/log.h"

namespace {

struct Signals {
  uv_signal_t sigint;
  uv_signal_t sigterm;
  uv_signal_t sighup;
  uvsched::Daemon* daemon;
};

void on_signal(uv_signal_t* handle, int signum) {
  auto* s = static_cast<Signals*>(handle->data);
  uvsched::log_info("signal").kv("signal", signum == SIGINT ? "SIGINT" : "SIGTERM");
  uv_signal_stop(&s->sigint);
  uv_signal_stop(&s->sigterm);
  uv_signal_stop(&s->sighup);
  s->daemon->stop([s] {
    uv_close(reinterpret_cast<uv_handle_t*>(&s->sigint), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&s->sigterm), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&s->sighup), nullptr);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  uvsched::ConfigResult parsed = uvsched::parse_config(args);
  switch (parsed.action) {
    case uvsched::ConfigResult::Action::kHelp:
    case uvsched::ConfigResult::Action::kVersion:
      fputs(parsed.message.c_str(), stdout);
      return 0;
    case uvsched::ConfigResult::Action::kError:
      fprintf(stderr, "uvsched: %s\n", parsed.message.c_str());
      return 2;
    case uvsched::ConfigResult::Action::kRun:
      break;
  }
  uvsched::log_configure(parsed.config.log_level, parsed.config.log_format);
  uvsched::log_info("allocator").kv("name", uvsched::allocator_name());
  if (uvsched::OpenFilesLimit files = uvsched::raise_open_files_limit(); files.raised_from != 0) {
    uvsched::log_info("open_files_limit_raised").kv("from", files.raised_from).kv("to", files.soft);
  }
  signal(SIGPIPE, SIG_IGN);

  uv_loop_t* loop = uv_default_loop();
  uvsched::Daemon daemon(loop, parsed.config);

  // Handlers go in before start(): it logs "listening", and a SIGTERM right
  // after that must stop the daemon gracefully, not kill it.
  Signals signals;
  signals.daemon = &daemon;
  uv_signal_init(loop, &signals.sigint);
  uv_signal_init(loop, &signals.sigterm);
  uv_signal_init(loop, &signals.sighup);
  signals.sigint.data = signals.sigterm.data = signals.sighup.data = &signals;
  uv_signal_start(&signals.sigint, on_signal, SIGINT);
  uv_signal_start(&signals.sigterm, on_signal, SIGTERM);
  uv_signal_start(
      &signals.sighup, [](uv_signal_t* h, int) { static_cast<Signals*>(h->data)->daemon->reload(); }, SIGHUP);

  if (daemon.start() != 0) {
    for (uv_signal_t* s : {&signals.sigint, &signals.sigterm, &signals.sighup}) {
      uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
    }
    uv_run(loop, UV_RUN_DEFAULT);  // let what start() opened close cleanly
    return 1;
  }

  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  return 0;
}
