// kube-scheduler's nominator: the pods a preemption made room for, each with
// the agent it made the room on (status.nominatedNodeName), its priority and
// since when it holds the room. While it holds it, the room is its: other
// pods of lower or equal priority pass that agent's offers over, and an offer
// there wakes it. Pure bookkeeping, times passed in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace uvsched {

class Nominations {
 public:
  struct Nomination {
    std::string agent;
    int32_t priority = 0;   // the pod's (spec.priority cannot change)
    uint64_t since_ms = 0;  // monotonic: when its hold on the room began
  };

  // `pod` goes to `agent` once the room is there (a nomination elsewhere is dropped).
  void nominate(const std::string& pod, const std::string& agent, int32_t priority, uint64_t now_ms);
  void forget(const std::string& pod);
  // The hold starts again now (the pod's victims were just seen gone: the
  // room is offered only after that).
  void hold_from(const std::string& pod, uint64_t now_ms);
  const Nomination* of(const std::string& pod) const;
  // True when a pod other than `pod` with at least `priority` is nominated
  // to `agent`: the room there is that pod's.
  bool reserved_for_other(const std::string& agent, const std::string& pod, int32_t priority) const;
  std::vector<std::string> pods_on(const std::string& agent) const;
  bool empty() const { return by_pod_.empty(); }
  size_t size() const { return by_pod_.size(); }

 private:
  std::map<std::string, Nomination> by_pod_;
  std::map<std::string, std::map<std::string, int32_t>> by_agent_;  // agent -> pod -> its priority
};

}  // namespace uvsched
