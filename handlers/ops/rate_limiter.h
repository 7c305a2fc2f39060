// Requests a second per client, so that one client's flood is answered 429
// cheaply (on the request's head, before its body) while everyone else's
// requests go on: a bucket per token, per agent certificate, or per address
// for clients with neither. Health probes are never limited, nor the paths
// the daemon names (calls whose client takes any answer as final, where a 429
// would strand the caller rather than slow it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include <string_view>
#include "policy/token_bucket.h"
#include "reactor/clock.h"

namespace uvsched {

class RateLimiter {
 public:
  using PathFilter = std::function<bool(std::string_view path)>;
  RateLimiter(Clock& clock, RateLimit limit, PathFilter never_limited = nullptr)
      : clock_(clock), limit_(limit), never_limited_(std::move(never_limited)) {}

  bool enabled() const { return limit_.rate > 0; }
  // nullopt: go on; else the seconds to say in Retry-After with the 429.
  std::optional<uint64_t> admit(const std::string& client, std::string_view path);
  uint64_t refused() const { return refused_; }
  size_t clients() const { return buckets_.size(); }

 private:
  void forget_full();

  Clock& clock_;
  RateLimit limit_;
  PathFilter never_limited_;
  std::unordered_map<std::string, TokenBucket> buckets_;
  size_t forget_at_ = 4096;  // buckets kept before the full (idle) ones are dropped
  uint64_t refused_ = 0;
};

}  // namespace uvsched
