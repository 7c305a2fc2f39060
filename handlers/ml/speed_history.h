// What jobs of one kind measured: the epochs (parallelism, seconds) that
// every job with the same function, model, dataset and batch size reported,
// kPointsPerKind of them (trim_points: the latest, but the parallelism with
// the most points gives one up first). A job's epochs take the same time as
// its predecessors' at the same parallelism (the same code on the same data
// in the same steps), so a new job's speed model can start from theirs
// instead of a prior that knows nothing; recurring jobs are the common case
// on shared clusters (the trace in tools/ml_trace_sim is 160 jobs of six
// models). Kept in memory only, like the jobs' own models: after a restart
// it is learnt again from the next reports. Live state of the ML domain; no
// I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "handlers/ml/kubeml_types.h"
#include "policy/speed_model.h"

namespace uvsched {

class SpeedHistory {
 public:
  static constexpr size_t kPointsPerKind = 64;
  static constexpr size_t kKinds = 1024;  // the least recently reported kind goes first

  // The kind a request's job belongs to: its function, model, dataset and
  // batch size (what decides how long its epochs take).
  static std::string kind_of(const TrainRequest& request);

  void add(const std::string& kind, EpochPoint point);
  bool knows(const std::string& kind) const { return kinds_.count(kind) != 0; }
  // The stamp of the latest add to `kind`, from one counter over all kinds
  // (so it only grows, across a kind's eviction too); 0 for a kind not held.
  uint64_t version(const std::string& kind) const;
  // Whether groups_for(kind, own) may differ from what it was when the kind
  // was at version `since` (own unchanged): the kind's points changed since
  // at a parallelism `own` has none at (where it has, its own points win, so
  // the kind's do not count), or the kind was evicted or created since. With
  // many running jobs of one kind every report bumps the version, and
  // refitting all of them on each was most of a decision's time.
  bool changed_for(const std::string& kind, uint64_t since, const std::vector<EpochGroup>& own) const;
  // What a job's model is fitted to, grouped by parallelism: its own epochs'
  // groups (`own`, group_points of them), and its kind's at the parallelisms
  // it never ran (where it ran, its own measurements win). The kind's groups
  // are kept up to date by add(), so a refit does not go over its points.
  std::vector<EpochGroup> groups_for(const std::string& kind, const std::vector<EpochGroup>& own) const;
  size_t kinds() const { return kinds_.size(); }

 private:
  struct Kind {
    std::deque<EpochPoint> points;
    std::vector<EpochGroup> groups;  // group_points(points)
    uint64_t created = 0;            // adds_ when it was (re)created
    uint64_t version = 0;            // adds_ when it last grew: also the eviction order
    // By parallelism, adds_ when its points there last changed (an add, or
    // trim_points dropping one): what changed_for looks at.
    std::map<int, uint64_t> changed_at;
  };
  std::map<std::string, Kind> kinds_;
  uint64_t adds_ = 0;
};

}  // namespace uvsched
