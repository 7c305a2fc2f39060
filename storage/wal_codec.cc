#include "storage/wal_codec.h"

#include <zlib.h>

#include <cstring>

namespace uvsched {

void WalWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void WalWriter::i64(int64_t v) {
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

void WalWriter::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  out_.append(s);
}

bool WalReader::u8(uint8_t* v) {
  if (in_.empty()) return false;
  *v = static_cast<uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

bool WalReader::u32(uint32_t* v) {
  if (in_.size() < 4) return false;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
  *v = r;
  in_.remove_prefix(4);
  return true;
}

bool WalReader::i64(int64_t* v) {
  if (in_.size() < 8) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
  *v = static_cast<int64_t>(r);
  in_.remove_prefix(8);
  return true;
}

bool WalReader::str(std::string* s) {
  uint32_t n;
  if (!u32(&n) || in_.size() < n) return false;
  s->assign(in_.data(), n);
  in_.remove_prefix(n);
  return true;
}

uint32_t crc_extend(uint32_t crc, std::string_view piece) {
  return static_cast<uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(piece.data()), static_cast<z_size_t>(piece.size())));
}

static uint32_t crc_of(std::string_view payload) { return crc_extend(0, payload); }

std::string frame_header(size_t size, uint32_t crc) {
  WalWriter head;
  head.u32(static_cast<uint32_t>(size));
  head.u32(crc);
  return head.take();
}

void append_frame(std::string& out, std::string_view payload) {
  out += frame_header(payload.size(), crc_of(payload));
  out.append(payload);
}

std::string encode_record(const LogRecord& record) {
  WalWriter w;
  w.i64(record.revision);
  w.u32(static_cast<uint32_t>(record.mutations.size()));
  for (const auto& m : record.mutations) {
    w.u8(static_cast<uint8_t>(m.kind));
    w.str(m.key);
    w.str(m.value);
    w.i64(m.lease);
    w.i64(m.ttl);
  }
  std::string out;
  append_frame(out, w.take());
  return out;
}

bool read_frame(std::string_view bytes, std::string_view* payload, size_t* frame_size) {
  WalReader r(bytes);
  uint32_t len, crc;
  if (!r.u32(&len) || !r.u32(&crc)) return false;
  if (bytes.size() - 8 < len) return false;
  std::string_view p = bytes.substr(8, len);
  if (crc_of(p) != crc) return false;
  *payload = p;
  *frame_size = 8 + static_cast<size_t>(len);
  return true;
}

static bool decode_record(std::string_view payload, LogRecord* out) {
  WalReader r(payload);
  uint32_t n;
  if (!r.i64(&out->revision) || !r.u32(&n)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    Mutation m;
    uint8_t kind;
    if (!r.u8(&kind) || kind < 1 || kind > 4 || !r.str(&m.key) || !r.str(&m.value) || !r.i64(&m.lease) ||
        !r.i64(&m.ttl))
      return false;
    m.kind = static_cast<Mutation::Kind>(kind);
    out->mutations.push_back(std::move(m));
  }
  return r.done();
}

LogScan scan_log(std::string_view bytes, const std::function<void(const LogRecord&)>& each) {
  LogScan out;
  size_t at = 0;
  while (at < bytes.size()) {
    std::string_view payload;
    size_t size;
    LogRecord rec;
    if (!read_frame(bytes.substr(at), &payload, &size) || !decode_record(payload, &rec)) break;
    each(rec);
    ++out.records;
    at += size;
  }
  out.valid_bytes = at;
  return out;
}

}  // namespace uvsched
