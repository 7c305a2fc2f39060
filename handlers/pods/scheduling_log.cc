#include "handlers/pods/scheduling_log.h"

#include "handlers/pods/pod_validation.h"

namespace uvsched {

void SchedulingLog::add(int64_t unix_ms, Kind kind, std::string pod, std::string detail) {
  if (records_.size() == kKept) records_.pop_front();
  records_.push_back({unix_ms, kind, std::move(pod), std::move(detail)});
}

void SchedulingLog::write(JsonWriter& w, size_t limit) const {
  w.key("events").begin_array();
  size_t n = 0;
  for (auto it = records_.rbegin(); it != records_.rend() && n < limit; ++it, ++n) {
    const Record& r = *it;
    // Type and reason as kube-scheduler and the kubelet name them.
    const char* type = "Normal";
    const char* reason = "Scheduled";
    std::string message;
    switch (r.kind) {
      case Kind::kScheduled:
        message = "Successfully assigned " + r.pod + " to " + r.detail;
        break;
      case Kind::kFailedScheduling:
        type = "Warning";
        reason = "FailedScheduling";
        message = r.detail;
        break;
      case Kind::kPreempted:
        reason = "Preempted";
        message = r.detail;
        break;
      case Kind::kTaskEnded:
        type = "Warning";
        reason = "TaskEnded";
        message = r.detail;
        break;
      case Kind::kTaintEviction:
        reason = "TaintManagerEviction";
        message = "Marking for deletion Pod " + r.pod + " (a NoExecute taint on node " + r.detail + ")";
        break;
    }
    w.begin_object().key("time").value(rfc3339(r.unix_ms)).key("type").value(type).key("reason").value(reason);
    w.key("pod").value(r.pod).key("message").value(message).end_object();
  }
  w.end_array();
}

}  // namespace uvsched
