#include "handlers/ops/rate_limiter.h"

#include <algorithm>

namespace uvsched {

std::optional<uint64_t> RateLimiter::admit(const std::string& client, std::string_view path) {
  if (!enabled() || path == "/health" || path == "/healthz" || path == "/readyz") return std::nullopt;
  if (never_limited_ && never_limited_(path)) return std::nullopt;
  uint64_t now = clock_.now_ms();
  TokenBucket& bucket = buckets_[client];
  if (limit_.take(bucket, now)) {
    if (buckets_.size() >= forget_at_) forget_full();
    return std::nullopt;
  }
  ++refused_;
  return std::max<uint64_t>(1, (limit_.wait_ms(bucket, now) + 999) / 1000);
}

// A bucket that has refilled is as good as a new one: dropping it bounds the
// map by the clients active within a burst's refill time.
void RateLimiter::forget_full() {
  uint64_t now = clock_.now_ms();
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    it = limit_.full(it->second, now) ? buckets_.erase(it) : std::next(it);
  }
  forget_at_ = std::max<size_t>(4096, buckets_.size() * 2);
}

}  // namespace uvsched
