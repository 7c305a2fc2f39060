// How values sit in etcd. A value of 64 bytes or more is packed with zstd
// against the daemon's dictionary of typical values and stored behind a
// marker that names the dictionary: etcd then parses, logs, replicates and
// keeps a fifth of the bytes (a stored pod: ~740 -> ~130), which is most of
// its CPU per write. (Kubernetes keeps protobuf in etcd for the same reason.)
// Anything else is stored as it is, so values stored plainly — by an older
// uvsched, by `--etcd-values plain`, by hand with etcdctl — read back
// unchanged; a plain value that happens to begin with the marker is wrapped.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "storage/value_codec.h"

namespace uvsched {

class EtcdValues {
 public:
  // pack false: values are written plainly (still read in either form).
  // Values packed against an `older` dictionary (an earlier release's) are
  // read too; new ones are packed against `dictionary`.
  EtcdValues(std::string dictionary, bool pack, const std::vector<std::string>& older = {});

  std::string encode(std::string value);
  // False when the value was packed against a dictionary we do not know, or
  // is damaged: it is then left as it was stored.
  bool decode(std::string* value);

  static constexpr size_t kMarkerSize = 8;  // "\0uvz" and the dictionary's fingerprint

 private:
  struct Known {
    std::string marker;  // "\0uvz" and the dictionary's fingerprint
    std::unique_ptr<ValueCodec> codec;
  };
  static Known known(std::string dictionary);

  Known current_;
  std::vector<Known> older_;
  bool pack_;
};

}  // namespace uvsched
