// Opens the store a `--store` spec names: embedded:DIR or etcd:URL[,URL...].
// etcd_ca verifies https:// etcd endpoints (empty: the system's CAs).
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

std::unique_ptr<Store> open_store(uv_loop_t* loop, Clock& clock, const std::string& spec, const std::string& etcd_ca,
                                  std::string* error);

}  // namespace uvsched
