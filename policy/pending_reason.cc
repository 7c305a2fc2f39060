#include "policy/pending_reason.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace uvsched {
namespace {

constexpr const char* kReasons[] = {
    "node(s) didn't match the requested node name",                                   // kNodeName
    "node(s) didn't match Pod's node affinity/selector",                              // kSelector
    "Insufficient cpu",                                                               // kCpu
    "Insufficient memory",                                                            // kMemory
    "node(s) didn't have free ports for the requested pod ports",                     // kPorts
    "node(s) were unschedulable",                                                     // kUnschedulable (cordoned)
    "node(s) had untolerated taints",                                                 // kTaint
    "node(s) didn't match pod affinity rules",                                        // kPodAffinity
    "node(s) didn't match pod anti-affinity rules",                                   // kPodAntiAffinity
    "node(s) didn't satisfy existing pods anti-affinity rules",                       // kExistingAntiAffinity
    "node(s) didn't match pod topology spread constraints",                           // kTopologySpread
    "node(s) didn't match pod topology spread constraints (missing required label)",  // kTopologySpreadLabel
    "node(s) were not connected",                                                     // not connected
};

// 6, 0.5, 1.25, 7168: whole numbers without a point, others to three places.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void PendingReason::saw(const Offer& offer, std::optional<MisfitKind> misfit) {
  ++offers_;
  const Resources& r = offer.resources;
  // A cordoned or tainted agent's offer is no room the pod could have: not named as the largest.
  bool free = misfit != MisfitKind::kUnschedulable && misfit != MisfitKind::kTaint &&
              (!misfit || *misfit < MisfitKind::kPodAffinity);  // nor one the placed pods keep it from
  if (free && (!any_ || r.cpus > largest_cpus_ || (r.cpus == largest_cpus_ && r.mem_mib > largest_mem_mib_))) {
    any_ = true;
    largest_cpus_ = r.cpus;
    largest_mem_mib_ = r.mem_mib;
    largest_agent_ = offer.agent;
  }
  if (!agents_.insert(offer.agent).second) return;  // counted by its first offer
  counts_[misfit ? static_cast<size_t>(*misfit) : kKinds - 1] += 1;
  if (misfit && *misfit != MisfitKind::kCpu && *misfit != MisfitKind::kMemory && *misfit != MisfitKind::kPorts) {
    refused_until_change_.push_back(offer.agent);
  }
}

std::string PendingReason::message(const PodNeeds& pod, size_t agents) const {
  size_t total = std::max(agents, agents_.size());
  std::vector<std::string> parts;
  for (size_t k = 0; k < kKinds; ++k) {
    if (counts_[k]) parts.push_back(std::to_string(counts_[k]) + " " + kReasons[k]);
  }
  if (size_t idle = total - agents_.size(); idle > 0)
    parts.push_back(std::to_string(idle) + " node(s) had no free offer");
  std::sort(parts.begin(), parts.end(), [](const std::string& a, const std::string& b) {
    return a.substr(a.find(' ') + 1) < b.substr(b.find(' ') + 1);  // by reason, as kube-scheduler sorts them
  });
  std::string out = "0/" + std::to_string(total) + " nodes are available";
  if (total == 0) {
    out += ": no agent has subscribed.";
  } else {
    out += ": ";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    out += ".";
  }
  out += " pod requests cpu " + number(pod.cpus) + ", memory " + number(pod.mem_mib) + "Mi";
  if (any_) {
    out += "; the largest free offer is cpu " + number(largest_cpus_) + ", memory " + number(largest_mem_mib_) +
           "Mi on " + largest_agent_;
  } else {
    out += "; there are no free offers";
  }
  return out + ".";
}

}  // namespace uvsched
