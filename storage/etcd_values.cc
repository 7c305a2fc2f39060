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

// The fast level: every write is packed on the loop (the embedded store packs
// a value once it settles, and keeps it in memory: it packs tighter).
EtcdValues::EtcdValues(std::string dictionary, bool pack)
    : codec_(std::move(dictionary), ValueCodec::kFast), pack_(pack) {
  uint32_t f = fingerprint(codec_.dictionary());
  marker_.assign(kMagic);
  for (int shift = 24; shift >= 0; shift -= 8) marker_.push_back(static_cast<char>((f >> shift) & 0xff));
}

std::string EtcdValues::encode(std::string value) {
  if (pack_ && value.size() >= ValueCodec::kMinPackedSize) {
    std::string packed = codec_.pack(value);
    if (!ValueCodec::is_raw(packed)) return marker_ + packed;
  }
  if (std::string_view(value).substr(0, kMagic.size()) == kMagic) return marker_ + ValueCodec::raw(value);
  return value;
}

bool EtcdValues::decode(std::string* value) {
  std::string_view stored(*value);
  if (stored.substr(0, kMagic.size()) != kMagic) return true;  // stored plainly
  if (stored.substr(0, kMarkerSize) != marker_) return false;  // another dictionary's
  std::string plain;
  if (!codec_.unpack(stored.substr(kMarkerSize), &plain)) return false;
  *value = std::move(plain);
  return true;
}

}  // namespace uvsched
