// The last few hundred things the pod scheduler did or could not do, newest
// last, for the status page's "recent scheduling events". Kept in memory
// apart from the Events /api/v1/events makes from the pods themselves: that
// list reads every pod from the store, which at 100,000 pods is no thing to
// ask every few seconds. A record is cheap to add (placing a pod adds one);
// its words are made when it is read.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "reactor/json_writer.h"

namespace uvsched {

class SchedulingLog {
 public:
  enum class Kind : uint8_t {
    kScheduled,         // detail: the agent
    kFailedScheduling,  // detail: why it waits (only when that changed)
    kPreempted,         // detail: by whom, where
    kTaskEnded,         // detail: why its task ended (failed, lost, killed)
    kTaintEviction,     // detail: the agent whose NoExecute taint it did not tolerate (any more)
  };
  static constexpr size_t kKept = 200;

  void add(int64_t unix_ms, Kind kind, std::string pod, std::string detail);
  size_t size() const { return records_.size(); }
  // {"events":[{"time","type","reason","pod","message"}...]}, newest first, at most `limit`.
  void write(JsonWriter& w, size_t limit) const;
  void clear() { records_.clear(); }

 private:
  struct Record {
    int64_t unix_ms;
    Kind kind;
    std::string pod, detail;
  };
  std::deque<Record> records_;
};

}  // namespace uvsched
