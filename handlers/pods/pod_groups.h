// The pod groups the scheduler places all or nothing (policy/gang.h): the
// PodGroup objects as the store has them (followed by a PrefixInformer), the
// pods labelled into each (scheduling.x-k8s.io/pod-group), and each group's
// status written back as it changes: phase and counts, once per turn at most.
// A group that does not exist (yet) holds its pods back; one created, or
// changed, wakes them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "handlers/json_value.h"
#include "handlers/pods/pod_writer.h"
#include "handlers/pods/scheduling_objects.h"
#include "policy/gang.h"
#include "reactor/clock.h"
#include "reactor/clock_turn.h"
#include "storage/prefix_informer.h"

namespace uvsched {

class PodGroups {
 public:
  // The counts of a group's members as the scheduler knows them (its tasks).
  using Counter = std::function<GangCounts(const std::string& group, const std::set<std::string>& members)>;
  // A group appeared or changed: its waiting members are worth trying now.
  using OnChange = std::function<void(const std::string& group)>;

  PodGroups(Store& store, Clock& clock, PodWriter& writer, Counter counter, OnChange on_change);
  void start();
  void stop();  // and forgets the members (a new leader learns them from the pods)
  bool synced() const { return informer_.synced(); }

  // "ns/name" of the group `pod` is labelled into, or "".
  static std::string group_of(const JsonValue& pod);
  struct Group {
    bool exists = false;  // its PodGroup object is stored
    PodGroupSpec spec;
    std::set<std::string> members;  // pods (ns/name) labelled into it and not finished
    size_t succeeded = 0, failed = 0;
    uint64_t waiting_since_ms = 0;  // monotonic: when its first member began to wait (0: none waits)
    std::string written;            // the status last written
  };
  const Group* find(const std::string& group) const;
  void join(const std::string& group, const std::string& pod);
  // The pod left the group: deleted, or finished (`outcome`: "Succeeded", "Failed"; "" for neither).
  void leave(const std::string& group, const std::string& pod, const std::string& outcome = "");
  // A member began to wait / the group was placed (its wait is over).
  void waiting(const std::string& group, uint64_t now);
  void placed(const std::string& group);
  // Past its scheduleTimeoutSeconds, the seconds it has waited; else 0.
  uint64_t timed_out_after_s(const std::string& group, uint64_t now) const;
  // Its status is written on a coming turn, if it changed.
  void touch(const std::string& group);
  size_t size() const { return groups_.size(); }

 private:
  void on_object(const std::string& key, const std::string* value);
  void flush();
  // The status `group` has now (its members' counts, its phase); nullopt
  // for a group without an object.
  std::optional<JsonValue> status_of(const std::string& group) const;
  void gc(const std::string& group);  // a group with no object and no members is forgotten

  Clock& clock_;
  PodWriter& writer_;
  Counter counter_;
  OnChange on_change_;
  PrefixInformer informer_;
  std::string prefix_;
  std::map<std::string, Group> groups_;
  std::set<std::string> dirty_;
  ClockTurn flush_;
};

}  // namespace uvsched
