// The embedded store's on-disk format. Each record is framed as
//   u32 length | u32 crc32(payload) | payload
// (little-endian), so recovery can tell a whole record from a torn or corrupt
// tail. A log record's payload is its revision and mutations; the snapshot
// file is one framed record holding KvState::encode_snapshot().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/kv_state.h"

namespace uvsched {

class WalWriter {
 public:
  WalWriter() = default;
  // Appends to `start`, with room reserved for `more` bytes.
  WalWriter(std::string start, size_t more) : out_(std::move(start)) { out_.reserve(out_.size() + more); }
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v);
  void i64(int64_t v);
  void str(std::string_view s);
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class WalReader {
 public:
  explicit WalReader(std::string_view in) : in_(in) {}
  bool u8(uint8_t* v);
  bool u32(uint32_t* v);
  bool i64(int64_t* v);
  bool str(std::string* s);
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

// Frames a payload: length, CRC, bytes.
void append_frame(std::string& out, std::string_view payload);
// The frame's header alone (length, CRC), for a payload written in pieces:
// its size, and the CRC of its pieces in order (crc_extend from 0, piece by piece).
std::string frame_header(size_t size, uint32_t crc);
uint32_t crc_extend(uint32_t crc, std::string_view piece);
std::string encode_record(const LogRecord& record);

struct LogScan {
  size_t records = 0;
  size_t valid_bytes = 0;  // everything after this is torn or corrupt
};
// Hands each whole record to `each`, in order, up to the first torn or
// corrupt one; one record at a time, so recovery never holds the log twice.
LogScan scan_log(std::string_view bytes, const std::function<void(const LogRecord&)>& each);

// The payload of the first frame of `bytes`, if it is whole and its CRC matches.
bool read_frame(std::string_view bytes, std::string_view* payload, size_t* frame_size);

}  // namespace uvsched
