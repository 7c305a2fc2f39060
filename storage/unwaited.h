// The callback for a store call whose result nobody waits for (a cleanup, a
// refresh, a write the next one supersedes): a failure still leaves a log
// line naming what and where, never silence.
#pragma once

#include <string>
#include <utility>

#include "reactor/log.h"

namespace uvsched {

template <typename Result>
auto unwaited(std::string what, std::string key) {
  return [what = std::move(what), key = std::move(key)](Result&& r) {
    if (!r.status.ok()) log_warn("store_call_failed").kv("what", what).kv("key", key).kv("error", r.status.message);
  };
}

}  // namespace uvsched
