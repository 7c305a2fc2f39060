#include "policy/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace uvsched {
namespace {

double level(const RateLimit& limit, const TokenBucket& b, uint64_t now_ms) {
  if (!b.started) return limit.burst;
  double elapsed = now_ms > b.last_ms ? static_cast<double>(now_ms - b.last_ms) / 1000.0 : 0.0;
  return std::min(limit.burst, b.tokens + elapsed * limit.rate);
}

}  // namespace

bool RateLimit::take(TokenBucket& b, uint64_t now_ms) const {
  if (rate <= 0) return true;
  double tokens = level(*this, b, now_ms);
  b.started = true;
  b.last_ms = std::max(b.last_ms, now_ms);
  if (tokens < 1.0) {
    b.tokens = tokens;
    return false;
  }
  b.tokens = tokens - 1.0;
  return true;
}

uint64_t RateLimit::wait_ms(const TokenBucket& b, uint64_t now_ms) const {
  if (rate <= 0) return 0;
  double tokens = level(*this, b, now_ms);
  if (tokens >= 1.0) return 0;
  return static_cast<uint64_t>(std::ceil((1.0 - tokens) / rate * 1000.0));
}

bool RateLimit::full(const TokenBucket& b, uint64_t now_ms) const { return level(*this, b, now_ms) >= burst; }

}  // namespace uvsched
