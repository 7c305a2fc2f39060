#include "policy/gang.h"

#include <algorithm>
#include <numeric>

namespace uvsched {

std::vector<size_t> gang_try_order(const std::vector<GangMember>& members) {
  std::vector<size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (members[a].cpus != members[b].cpus) return members[a].cpus > members[b].cpus;
    return members[a].mem_mib > members[b].mem_mib;
  });
  return order;
}

GangVerdict judge_gang(int64_t min_member, size_t placed, size_t fit_now) {
  GangVerdict v;
  size_t min = static_cast<size_t>(std::max<int64_t>(min_member, 1));
  v.needed = placed >= min ? 0 : min - placed;
  // Past its quorum a group's stragglers go as they fit, like single pods.
  v.place = fit_now > 0 && fit_now >= v.needed;
  return v;
}

std::string gang_phase(const GangCounts& c) {
  size_t min = static_cast<size_t>(std::max<int64_t>(c.min_member, 1));
  if (c.running >= min) return "Running";
  if (c.scheduled >= min) return "Scheduled";
  if (c.succeeded >= min) return "Finished";
  if (c.failed > 0 && c.running + c.succeeded < min) return "Failed";
  if (c.timed_out) return "Failed";
  return "Pending";
}

std::string gang_waiting_message(const std::string& group, int64_t min_member, size_t placed, size_t fit_now,
                                 const std::string& member_reason, uint64_t timed_out_after_s) {
  std::string m = "pod group " + group + ": ";
  if (timed_out_after_s > 0) m += "timed out after " + std::to_string(timed_out_after_s) + "s; ";
  m += std::to_string(placed + fit_now) + " of its " + std::to_string(std::max<int64_t>(min_member, 1)) +
       " members needed (minMember " + std::to_string(min_member) + ") fit now";
  if (placed > 0) m += " (" + std::to_string(placed) + " already placed)";
  if (!member_reason.empty()) m += "; " + member_reason;
  return m;
}

}  // namespace uvsched
