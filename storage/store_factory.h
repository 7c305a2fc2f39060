// Opens the store a `--store` spec names: embedded:DIR or etcd:URL[,URL...].
#pragma once

#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

struct StoreOptions {
  std::string etcd_ca;           // verifies https:// etcd endpoints (empty: the system's CAs)
  std::string value_dictionary;  // typical values: both stores pack values against it
  std::vector<std::string>
      older_value_dictionaries;  // earlier releases': values in etcd packed against them stay readable
  bool pack_etcd_values = true;  // false: values go into etcd plainly (readable with etcdctl)
};

// The most connections the store a spec names opens to its servers (the
// embedded store: none), for the daemon's count of file descriptors.
size_t store_connections_at_most(const std::string& spec);

std::unique_ptr<Store> open_store(uv_loop_t* loop, Clock& clock, const std::string& spec, const StoreOptions& options,
                                  std::string* error);

}  // namespace uvsched
