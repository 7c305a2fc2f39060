#include "handlers/pods/framework_registration.h"

#include <algorithm>
#include <cstdlib>

#include "reactor/log.h"
#include "storage/unwaited.h"

namespace uvsched {

FrameworkRegistration::FrameworkRegistration(Store& store, Clock& clock, uint64_t failover_timeout_ms)
    : store_(store), clock_(clock), failover_timeout_ms_(failover_timeout_ms), timer_(clock.new_timer()) {}

void FrameworkRegistration::start() {
  ++run_;
  registered_ = false;
  read();
}

void FrameworkRegistration::stop() {
  ++run_;
  registered_ = false;
  timer_->stop();
}

void FrameworkRegistration::retry(const char* step, const StoreStatus& status) {
  log_warn("framework_register_failed").kv("step", step).kv("error", status.message).kv("retry_ms", kRetryMs);
  timer_->start(kRetryMs, [this] { read(); });
}

void FrameworkRegistration::read() {
  store_.get(kKey, {}, [this, run = run_](RangeResult&& r) {
    if (!current(run)) return;
    if (!r.status.ok()) return retry("read", r.status);
    bool known = !r.kvs.empty();
    if (known) {
      const std::string& stored = r.kvs[0].value;
      size_t bar = stored.find('|');
      int64_t alive_ms = bar == std::string::npos ? 0 : std::strtoll(stored.c_str() + bar + 1, nullptr, 10);
      int64_t gone_ms = alive_ms > 0 ? clock_.unix_ms() - alive_ms : 0;
      if (gone_ms > static_cast<int64_t>(failover_timeout_ms_)) {
        log_warn("framework_failed_over")
            .kv("framework_id", stored.substr(0, bar))
            .kv("gone_ms", gone_ms)
            .kv("why",
                "gone longer than --failover-timeout: a new framework; agents still running its tasks shut them down");
        known = false;
        id_ = "uvsched-" + std::to_string(clock_.unix_ms());
      } else {
        id_ = stored.substr(0, bar);
      }
    } else if (id_.empty()) {
      id_ = "uvsched-" + std::to_string(clock_.unix_ms());
    }
    grant(known);
  });
}

void FrameworkRegistration::grant(bool known) {
  int64_t ttl = std::max<int64_t>(1, static_cast<int64_t>(failover_timeout_ms_ / 1000));
  store_.lease_grant(ttl, [this, known, run = run_](LeaseResult&& lease) {
    if (!current(run)) return;
    if (!lease.status.ok()) return retry("lease_grant", lease.status);
    lease_ = lease.id;
    store_.put(kKey, record(), lease.id, [this, known, run](WriteResult&& w) {
      if (!current(run)) return;
      if (!w.status.ok()) return retry("put", w.status);
      registered_ = true;
      log_info(known ? "framework_reregistered" : "framework_registered").kv("framework_id", id_);
      refresh();
    });
  });
}

std::string FrameworkRegistration::record() const { return id_ + "|" + std::to_string(clock_.unix_ms()); }

void FrameworkRegistration::refresh() {
  uint64_t every = std::min<uint64_t>(30'000, std::max<uint64_t>(failover_timeout_ms_ / 2, 500));
  timer_->start(every, [this] {
    store_.lease_keepalive(lease_, [this, run = run_](LeaseResult&& r) {
      if (!current(run)) return;
      if (!r.status.ok()) {
        log_warn("framework_lease_lost").kv("error", r.status.message);
        return read();  // the same id again, under a new lease
      }
      // Alive now: the time a successor judges the failover timeout by.
      store_.put(kKey, record(), lease_, unwaited<WriteResult>("framework_refresh", kKey));
      refresh();
    });
  });
}

}  // namespace uvsched
