#include "storage/store_factory.h"

#include "storage/embedded_store.h"

namespace uvsched {

std::unique_ptr<Store> open_store(uv_loop_t* loop, Clock& clock, const std::string& spec, std::string* error) {
  if (spec.rfind("embedded:", 0) == 0) return EmbeddedStore::open(loop, clock, spec.substr(9), error);
  *error = "unsupported store '" + spec + "' (expected embedded:DIR or etcd:URLS)";
  return nullptr;
}

}  // namespace uvsched
