#include "reactor/secure_random.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace uvsched {

uint64_t secure_random_u64() {
  static std::array<uint64_t, 512> pool;
  static size_t next = pool.size();
  if (next == pool.size()) {
    auto* bytes = reinterpret_cast<unsigned char*>(pool.data());
    size_t got = 0;
    while (got < sizeof pool) {
      ssize_t n = getrandom(bytes + got, sizeof pool - got, 0);
      if (n < 0 && errno == EINTR) continue;
      // getrandom blocks until the pool is seeded and does not otherwise fail
      // for these sizes; without it, ids could be guessed: better to stop.
      if (n <= 0) abort();
      got += static_cast<size_t>(n);
    }
    next = 0;
  }
  uint64_t v = pool[next];
  pool[next++] = 0;  // what was handed out is not left lying in memory
  return v;
}

}  // namespace uvsched
