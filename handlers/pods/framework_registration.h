// The framework's registration: its id lives in the store under a lease of
// --failover-timeout, with the wall time it was last known alive
// ("ID|UNIX_MS", refreshed with the lease), so a uvsched that comes back in
// time is the same framework to its agents (they keep its tasks), and one
// that comes back later is a new one (they shut them down). The time is what
// decides: the embedded store's leases do not count down while the daemon is
// down (they are armed afresh at recovery).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

class FrameworkRegistration {
 public:
  static constexpr const char* kKey = "/uvsched/framework";
  static constexpr uint64_t kRetryMs = 1000;  // after a failed read, grant or write

  FrameworkRegistration(Store& store, Clock& clock, uint64_t failover_timeout_ms);
  FrameworkRegistration(const FrameworkRegistration&) = delete;
  FrameworkRegistration& operator=(const FrameworkRegistration&) = delete;

  // Reads the id a predecessor left (or makes one), stores it under a new
  // lease and keeps the lease alive; retried until it is stored.
  void start();
  // Stops refreshing; what is in flight is ignored when it answers.
  void stop();
  // Empty until the first read decided it.
  const std::string& id() const { return id_; }
  bool registered() const { return registered_; }

 private:
  void read();
  void grant(bool known);
  void refresh();
  void retry(const char* step, const StoreStatus& status);
  std::string record() const;  // "ID|UNIX_MS": the id, alive now
  // Whether a store's answer belongs to the current run (start..stop).
  bool current(uint64_t run) const { return run == run_; }

  Store& store_;
  Clock& clock_;
  uint64_t failover_timeout_ms_;
  std::string id_;
  int64_t lease_ = 0;
  bool registered_ = false;
  uint64_t run_ = 0;  // bumped by start and stop, so an old run's answers are ignored
  std::unique_ptr<Timer> timer_;
};

}  // namespace uvsched
