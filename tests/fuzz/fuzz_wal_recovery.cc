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
  // Whatever was recovered survives a snapshot, read back under another dictionary.
  std::string snapshot = state.encode_snapshot();
  uvsched::KvState back(64, 1 << 20, "a dictionary the values were not packed with");
  if (!back.load_snapshot(snapshot)) __builtin_trap();
  uvsched::RangeOptions all;
  all.prefix = true;
  auto before = state.range("", all), after = back.range("", all);
  if (before.kvs.size() != after.kvs.size() || back.revision() != state.revision()) __builtin_trap();
  for (size_t i = 0; i < before.kvs.size(); ++i) {
    const auto &a = before.kvs[i], &b = after.kvs[i];
    if (a.key != b.key || a.value != b.value || a.create_revision != b.create_revision ||
        a.mod_revision != b.mod_revision || a.version != b.version || a.lease != b.lease)
      __builtin_trap();
  }
  uvsched::KvState from_snapshot(64);
  std::string_view payload;
  size_t frame = 0;
  if (uvsched::read_frame(bytes, &payload, &frame)) from_snapshot.load_snapshot(payload);
  from_snapshot.load_snapshot(bytes);
  return 0;
}
