// A token bucket, as a value: `rate` tokens a second refill it up to
// `burst`; each request takes one. Time comes in as milliseconds, so the
// table test needs no clock.
#pragma once

#include <cstdint>

namespace uvsched {

struct TokenBucket {
  double tokens = 0;
  uint64_t last_ms = 0;
  bool started = false;  // a new bucket starts full
};

struct RateLimit {
  double rate = 0;   // tokens a second; <= 0: no limit
  double burst = 0;  // the most a bucket holds

  // Takes a token at `now_ms`; false when there is none (the request waits).
  bool take(TokenBucket& b, uint64_t now_ms) const;
  // Milliseconds until `b` holds a token again (0: it does).
  uint64_t wait_ms(const TokenBucket& b, uint64_t now_ms) const;
  // Whether `b` has refilled to the full burst by `now_ms` (forgetting it changes nothing).
  bool full(const TokenBucket& b, uint64_t now_ms) const;
};

}  // namespace uvsched
