// How the embedded store keeps values in memory: packed with zstd against a
// dictionary of typical values. Stored objects (pods above all) are ~740 B of
// JSON that differ from each other in a few fields, so against a dictionary of
// one such object they pack to ~120 B; at 100k pods that is the difference
// between 75 MB and 12 MB of RSS. Packing costs ~1.3 us, unpacking ~0.4 us
// when the dictionary carries zstd's entropy tables (~3.5 and ~1.4 us when it
// is plain text: zstd then builds a Huffman table for every value).
//
// A packed value is one tag byte and the bytes: kRaw (values too small to
// gain, or values zstd could not shrink) or kZstd (a zstd frame made with this
// codec's dictionary). Packed values are only meaningful to a codec with the
// same dictionary; snapshots store the dictionary beside them.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace uvsched {

class ValueCodec {
 public:
  // zstd's level. With a dictionary, levels above 1 shrink pods by only a
  // few bytes more; the fast (negative) levels pack no faster against a
  // dictionary with entropy tables, and a quarter bigger.
  static constexpr int kLevel = 1;
  // An empty dictionary still packs (plain zstd), just less tightly.
  explicit ValueCodec(std::string dictionary = {});
  ~ValueCodec();
  ValueCodec(const ValueCodec&) = delete;
  ValueCodec& operator=(const ValueCodec&) = delete;

  const std::string& dictionary() const { return dictionary_; }

  std::string pack(std::string_view value);
  // A value kept as it is (packed form, tag kRaw): cheap, for values that may soon change.
  static std::string raw(std::string_view value);
  // What raw() puts before the value, for writers that lay the two out themselves.
  static constexpr std::string_view kRawTag{"\0", 1};
  static bool is_raw(std::string_view packed) { return !packed.empty() && packed[0] == 0; }
  // Below this a value gains too little to be worth a frame header and the CPU.
  static constexpr size_t kMinPackedSize = 64;
  // False when `packed` is not a value this codec packed (corrupt input).
  bool unpack(std::string_view packed, std::string* value);

 private:
  struct Zstd;
  ZSTD_CCtx_s* compressor();
  ZSTD_DCtx_s* decompressor();
  std::string dictionary_;
  std::unique_ptr<Zstd> zstd_;
};

}  // namespace uvsched
