// Pod groups placed all or nothing, in the convention of the scheduler-plugins
// coscheduling plugin: a group's pending members are launched only when, with
// those already placed, at least minMember of them fit the live offers at
// once; until then none holds an offer. Pure: the caller walks the offers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace uvsched {

// The label that puts a pod into a group, and the group's kind.
inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

struct GangMember {
  double cpus = 0;
  double mem_mib = 0;
};
// The order to try a group's pending members in: the largest first (by cpus,
// then memory; equals keep their order), so a small member does not take the
// one offer a large one could use.
std::vector<size_t> gang_try_order(const std::vector<GangMember>& members);

struct GangVerdict {
  bool place = false;  // launch every member that fits now
  size_t needed = 0;   // how many more must fit at once for the group to go
};
// `placed`: members already bound; `fit_now`: pending members that fit now,
// each on its own offer.
GangVerdict judge_gang(int64_t min_member, size_t placed, size_t fit_now);

struct GangCounts {
  int64_t min_member = 1;
  size_t members = 0;  // pods labelled into it and not finished
  size_t scheduled = 0;
  size_t running = 0;
  size_t succeeded = 0;
  size_t failed = 0;
  bool timed_out = false;  // waited past scheduleTimeoutSeconds without being placed
};
// status.phase: Running, Scheduled, Finished, Failed (timed out, or a
// member failed with fewer than minMember left running) or Pending.
std::string gang_phase(const GangCounts& c);

// Why a member waits: "pod group default/g: 3 of its 4 members needed (minMember 4) fit now; " then
// the first unplaced member's reason (`member_reason`).
std::string gang_waiting_message(const std::string& group, int64_t min_member, size_t placed, size_t fit_now,
                                 const std::string& member_reason, uint64_t timed_out_after_s);

}  // namespace uvsched
