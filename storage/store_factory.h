// Opens the store a `--store` spec names: embedded:DIR or etcd:URL[,URL...].
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

std::unique_ptr<Store> open_store(uv_loop_t* loop, Clock& clock, const std::string& spec, std::string* error);

}  // namespace uvsched
