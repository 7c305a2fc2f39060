#include "handlers/pods/stored_object.h"

namespace uvsched {

std::string with_rv(const std::string& stored, int64_t rv) {
  static const std::string kMeta = "\"metadata\":{";
  size_t at = stored.find(kMeta);
  if (at == std::string::npos) return stored;
  at += kMeta.size();
  std::string field = "\"resourceVersion\":\"" + std::to_string(rv) + "\"";
  std::string out;
  out.reserve(stored.size() + field.size() + 1);
  out.append(stored, 0, at);
  out += field;
  if (stored[at] != '}') out += ',';
  out.append(stored, at, std::string::npos);
  return out;
}

std::optional<JsonValue> parse_stored(const KeyValue& kv) {
  std::string error;
  auto v = JsonValue::parse(kv.value, &error);
  if (v && v->is_object())
    v->ensure({"metadata"}).set("resourceVersion", JsonValue::string(std::to_string(kv.mod_revision)));
  return v;
}

}  // namespace uvsched
