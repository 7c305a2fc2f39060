// Log recovery on arbitrary bytes: decoding must stop at the first bad record,
// never crash, and replaying what it accepted must be safe; likewise a snapshot.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "storage/kv_state.h"
#include "storage/wal_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  uvsched::KvState state(64);
  uvsched::LogScan log = uvsched::scan_log(bytes, [&](const uvsched::LogRecord& rec) { state.replay(rec); });
  if (log.valid_bytes > size) __builtin_trap();
  state.encode_snapshot();
  uvsched::KvState from_snapshot(64);
  std::string_view payload;
  size_t frame = 0;
  if (uvsched::read_frame(bytes, &payload, &frame)) from_snapshot.load_snapshot(payload);
  from_snapshot.load_snapshot(bytes);
  return 0;
}
