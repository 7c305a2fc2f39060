#include "handlers/ops/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace uvsched {
namespace {

// Entries of /proc/self/fd, less the one the listing itself holds open.
double open_descriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  double n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

// When the process started, in seconds since the epoch: its start in clock
// ticks after boot (/proc/self/stat, field 22, after the command name, which
// may hold spaces) plus the boot time (/proc/stat's btime). 0 when unknown.
double process_start_seconds() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  size_t after_name = line.rfind(')');
  if (after_name == std::string::npos) return 0;
  std::istringstream fields(line.substr(after_name + 2));  // from field 3, the state
  std::string field;
  for (int i = 3; i < 22 && fields >> field;) ++i;
  double ticks = 0;
  if (!(fields >> ticks)) return 0;
  std::ifstream proc_stat("/proc/stat");
  double boot = 0;
  for (std::string key; proc_stat >> key;) {
    if (key == "btime") {
      proc_stat >> boot;
      break;
    }
    std::getline(proc_stat, key);
  }
  long hz = sysconf(_SC_CLK_TCK);
  if (boot <= 0 || hz <= 0) return 0;
  return boot + ticks / static_cast<double>(hz);
}

// The last count of open descriptors, and the one under way on the thread
// pool. Shared with the work in flight, so the registry may go first.
class OpenDescriptorCount : public std::enable_shared_from_this<OpenDescriptorCount> {
 public:
  // The first count now, while the daemon is made: few descriptors yet, and
  // no request waiting on the loop.
  explicit OpenDescriptorCount(uv_loop_t* loop) : loop_(loop), last_(open_descriptors()) {}
  double last() const { return last_; }
  // Starts a count unless one is under way.
  void refresh() {
    if (work_) return;
    work_ = std::make_unique<Work>();
    work_->self = shared_from_this();
    work_->req.data = work_.get();
    int rc = uv_queue_work(
        loop_, &work_->req, [](uv_work_t* r) { static_cast<Work*>(r->data)->count = open_descriptors(); },
        [](uv_work_t* r, int) {
          auto* w = static_cast<Work*>(r->data);
          std::shared_ptr<OpenDescriptorCount> self = std::move(w->self);
          if (w->count >= 0) self->last_ = w->count;
          self->work_.reset();
        });
    if (rc != 0) work_.reset();
  }

 private:
  struct Work {
    uv_work_t req;
    std::shared_ptr<OpenDescriptorCount> self;  // kept alive until the count is back
    double count = -1;
  };
  uv_loop_t* loop_;
  double last_;
  std::unique_ptr<Work> work_;
};

}  // namespace

void add_process_metrics(MetricsRegistry& registry, uv_loop_t* loop, const Clock& clock) {
  registry.counter_read("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                        [](const GaugeEmit& emit) {
                          uv_rusage_t r{};
                          if (uv_getrusage(&r) != 0) return;
                          auto seconds = [](const uv_timeval_t& t) {
                            return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
                          };
                          emit("", seconds(r.ru_utime) + seconds(r.ru_stime));
                        });
  registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", [](const GaugeEmit& emit) {
    size_t rss = 0;
    if (uv_resident_set_memory(&rss) == 0) emit("", static_cast<double>(rss));
  });
  auto fds = std::make_shared<OpenDescriptorCount>(loop);
  registry.gauge("process_open_fds", "Number of open file descriptors (counted after the scrape before).",
                 [fds](const GaugeEmit& emit) {
                   if (fds->last() >= 0) emit("", fds->last());
                   fds->refresh();
                 });
  registry.gauge("process_max_fds",
                 "Maximum number of open file descriptors (the soft limit; the daemon raises it to the hard one at "
                 "start).",
                 [](const GaugeEmit& emit) {
                   rlimit r{};
                   if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
                     emit("", static_cast<double>(r.rlim_cur));
                   }
                 });
  double started = process_start_seconds();
  if (started <= 0) started = static_cast<double>(clock.unix_ms()) / 1e3;
  registry.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                 [started](const GaugeEmit& emit) { emit("", started); });
}

}  // namespace uvsched
