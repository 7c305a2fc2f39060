#include "storage/etcd_values.h"

#include <cstdint>
#include <string_view>

namespace uvsched {

namespace {

// JSON never starts with a NUL byte: neither do the values we store plainly.
constexpr std::string_view kMagic{"\0uvz", 4};

// FNV-1a, 32 bits: enough to tell one dictionary from another, not a checksum.
uint32_t fingerprint(std::string_view bytes) {
  uint32_t h = 2166136261u;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

}  // namespace

// Every write is packed on the loop, at the codec's one level: against a
// dictionary with entropy tables (the pod dictionary has them) it packs as
// fast as the fast level did, and a pod comes out a quarter smaller (~120 B
// against ~156): less for etcd to log, keep and send to watchers.
EtcdValues::EtcdValues(std::string dictionary, bool pack, const std::vector<std::string>& older)
    : current_(known(std::move(dictionary))), pack_(pack) {
  for (const std::string& d : older) older_.push_back(known(d));
}

EtcdValues::Known EtcdValues::known(std::string dictionary) {
  Known k;
  uint32_t f = fingerprint(dictionary);
  k.marker.assign(kMagic);
  for (int shift = 24; shift >= 0; shift -= 8) k.marker.push_back(static_cast<char>((f >> shift) & 0xff));
  k.codec = std::make_unique<ValueCodec>(std::move(dictionary));
  return k;
}

std::string EtcdValues::encode(std::string value) {
  if (pack_ && value.size() >= ValueCodec::kMinPackedSize) {
    std::string packed = current_.codec->pack(value);
    if (!ValueCodec::is_raw(packed)) return current_.marker + packed;
  }
  if (std::string_view(value).substr(0, kMagic.size()) == kMagic) return current_.marker + ValueCodec::raw(value);
  return value;
}

bool EtcdValues::decode(std::string* value) {
  std::string_view stored(*value);
  if (stored.substr(0, kMagic.size()) != kMagic) return true;  // stored plainly
  std::string_view marker = stored.substr(0, kMarkerSize);
  ValueCodec* codec = marker == current_.marker ? current_.codec.get() : nullptr;
  for (const Known& k : older_) {
    if (!codec && marker == k.marker) codec = k.codec.get();
  }
  if (!codec) return false;  // another dictionary's
  std::string plain;
  if (!codec->unpack(stored.substr(kMarkerSize), &plain)) return false;
  *value = std::move(plain);
  return true;
}

}  // namespace uvsched
