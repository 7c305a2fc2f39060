// Backends for the store conformance suite: each gives a fresh, empty Store
// on a loop the test owns, and can restart it over the same data.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "reactor/loop_clock.h"
#include "storage/store.h"

namespace uvsched::test {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  virtual std::string name() const = 0;
  // A store over this backend's data; nullptr (with *error) on failure.
  virtual std::unique_ptr<Store> open(uv_loop_t* loop, Clock& clock, std::string* error) = 0;
};

std::unique_ptr<StoreBackend> make_embedded_backend();
// nullptr when etcd cannot be started here.
std::unique_ptr<StoreBackend> make_etcd_backend();
// Over a 3-member etcd cluster (one for the binary), with every member's URL.
std::unique_ptr<StoreBackend> make_etcd_cluster_backend();

// A temporary directory removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace uvsched::test
