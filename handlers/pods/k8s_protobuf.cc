#include "handlers/pods/k8s_protobuf.h"

#include <cstdint>
#include <functional>
#include <initializer_list>

namespace uvsched {
namespace {

// Reads one protobuf message's fields in order; a wire type it cannot skip,
// or a length past the end, ends it as malformed.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view bytes) : rest_(bytes) {}

  using OnBytes = std::function<bool(uint64_t field, std::string_view value)>;
  using OnVarint = std::function<void(uint64_t field, uint64_t value)>;
  // Calls `on_bytes` for each length-delimited field and skips the others.
  bool each_bytes(const OnBytes& on_bytes) { return each(on_bytes, nullptr); }
  // The same, and `on_varint` for each varint field (integers, enums, booleans).
  bool each(const OnBytes& on_bytes, const OnVarint& on_varint) {
    while (!rest_.empty()) {
      uint64_t key;
      if (!varint(&key)) return false;
      uint64_t field = key >> 3;
      switch (key & 7) {
        case 0: {
          uint64_t value;
          if (!varint(&value)) return false;
          if (on_varint) on_varint(field, value);
          break;
        }
        case 1:
          if (rest_.size() < 8) return false;
          rest_.remove_prefix(8);
          break;
        case 5:
          if (rest_.size() < 4) return false;
          rest_.remove_prefix(4);
          break;
        case 2: {
          uint64_t len;
          if (!varint(&len) || len > rest_.size()) return false;
          std::string_view value = rest_.substr(0, len);
          rest_.remove_prefix(len);
          if (!on_bytes(field, value)) return false;
          break;
        }
        default:
          return false;
      }
    }
    return true;
  }

 private:
  bool varint(uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) return false;
      auto b = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      *out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  std::string_view rest_;
};

JsonValue text(std::string_view s) { return JsonValue::string(std::string(s)); }

void append(JsonValue& list, std::string_view s) {
  if (!list.is_array()) list = JsonValue::array();
  list.push(text(s));
}

// A map<string,string> entry: key = 1, value = 2.
bool read_entry(std::string_view bytes, JsonValue* map) {
  std::string key, value;
  bool ok = ProtoReader(bytes).each_bytes([&](uint64_t f, std::string_view v) {
    if (f == 1) key.assign(v);
    if (f == 2) value.assign(v);
    return true;
  });
  if (ok) map->set(key, JsonValue::string(value));
  return ok;
}

// ObjectMeta: name 1, generateName 2, namespace 3, labels 11, annotations 12,
// finalizers 14; the server's own fields (uid, resourceVersion, times) are
// not taken from a client.
bool read_meta(std::string_view bytes, JsonValue* meta) {
  *meta = JsonValue::object();
  return ProtoReader(bytes).each_bytes([&](uint64_t f, std::string_view v) {
    if (v.empty()) return true;  // an optional string sent empty is absent
    switch (f) {
      case 1:
        meta->set("name", text(v));
        return true;
      case 2:
        meta->set("generateName", text(v));
        return true;
      case 3:
        meta->set("namespace", text(v));
        return true;
      case 11:
        return read_entry(v, &meta->at("labels"));
      case 12:
        return read_entry(v, &meta->at("annotations"));
      case 14:
        append(meta->at("finalizers"), v);
        return true;
      default:
        return true;
    }
  });
}

// The k8s\0 magic, then runtime.Unknown: typeMeta 1 (apiVersion 1, kind 2), raw 2.
struct Envelope {
  std::string api_version, kind;
  std::string_view raw;
};

std::optional<Envelope> open_envelope(std::string_view body, std::string* error) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) return *error = "not Kubernetes protobuf (no k8s magic)", std::nullopt;
  Envelope e;
  bool ok = ProtoReader(body.substr(4)).each_bytes([&](uint64_t f, std::string_view v) {
    if (f == 1) {
      return ProtoReader(v).each_bytes([&](uint64_t tf, std::string_view tv) {
        if (tf == 1) e.api_version.assign(tv);
        if (tf == 2) e.kind.assign(tv);
        return true;
      });
    }
    if (f == 2) e.raw = v;
    return true;
  });
  if (!ok) return *error = "malformed protobuf envelope", std::nullopt;
  return e;
}

// Each string field named in `names` (by number, from 1) into `out`, when sent non-empty.
bool read_strings(std::string_view bytes, std::initializer_list<const char*> names, JsonValue* out) {
  *out = JsonValue::object();
  return ProtoReader(bytes).each_bytes([&](uint64_t f, std::string_view v) {
    if (f >= 1 && f <= names.size() && !v.empty()) out->set(names.begin()[f - 1], text(v));
    return true;
  });
}

// IntOrString: type 1 (0 an int, 1 a string), intVal 2, strVal 3; as its JSON.
bool read_int_or_string(std::string_view bytes, JsonValue* out) {
  uint64_t type = 0;
  int64_t int_val = 0;
  std::string str_val;
  bool ok = ProtoReader(bytes).each(
      [&](uint64_t f, std::string_view v) {
        if (f == 3) str_val.assign(v);
        return true;
      },
      [&](uint64_t f, uint64_t v) {
        if (f == 1) type = v;
        if (f == 2) int_val = static_cast<int32_t>(static_cast<uint32_t>(v));  // an int32, sign-extended on the wire
      });
  *out = type == 1 ? JsonValue::string(str_val) : JsonValue::integer(int_val);
  return ok;
}

// LabelSelector: matchLabels 1 (map entries), matchExpressions 2 (key 1, operator 2, values 3).
bool read_label_selector(std::string_view bytes, JsonValue* out) {
  *out = JsonValue::object();
  return ProtoReader(bytes).each_bytes([&](uint64_t f, std::string_view v) {
    if (f == 1) return read_entry(v, &out->at("matchLabels"));
    if (f != 2) return true;
    JsonValue req = JsonValue::object();
    bool ok = ProtoReader(v).each_bytes([&](uint64_t rf, std::string_view rv) {
      if (rf == 1) req.set("key", text(rv));
      if (rf == 2) req.set("operator", text(rv));
      if (rf == 3) append(req.at("values"), rv);
      return true;
    });
    JsonValue& list = out->at("matchExpressions");
    if (!list.is_array()) list = JsonValue::array();
    list.push(std::move(req));
    return ok;
  });
}

}  // namespace

std::optional<JsonValue> pod_disruption_budget_from_protobuf(std::string_view body, std::string* error) {
  auto envelope = open_envelope(body, error);
  if (!envelope) return std::nullopt;
  if (envelope->kind != "PodDisruptionBudget" || envelope->api_version != "policy/v1") {
    return *error = "a protobuf body is taken here only for a policy/v1 PodDisruptionBudget, not " +
                    envelope->api_version + " " + envelope->kind,
           std::nullopt;
  }
  JsonValue pdb = JsonValue::object();
  pdb.set("apiVersion", JsonValue::string("policy/v1"));
  pdb.set("kind", JsonValue::string("PodDisruptionBudget"));
  // metadata 1; spec 2: minAvailable 1, selector 2, maxUnavailable 3,
  // unhealthyPodEvictionPolicy 4. The status (3) is the server's.
  bool ok = ProtoReader(envelope->raw).each_bytes([&](uint64_t f, std::string_view v) {
    if (f == 1) return read_meta(v, &pdb.at("metadata"));
    if (f != 2) return true;
    JsonValue& spec = pdb.at("spec");
    spec = JsonValue::object();
    return ProtoReader(v).each_bytes([&](uint64_t sf, std::string_view sv) {
      switch (sf) {
        case 1:
          return read_int_or_string(sv, &spec.at("minAvailable"));
        case 2:
          return read_label_selector(sv, &spec.at("selector"));
        case 3:
          return read_int_or_string(sv, &spec.at("maxUnavailable"));
        case 4:
          if (!sv.empty()) spec.set("unhealthyPodEvictionPolicy", text(sv));
          return true;
        default:
          return true;
      }
    });
  });
  if (!ok) return *error = "malformed protobuf PodDisruptionBudget", std::nullopt;
  return pdb;
}

std::optional<JsonValue> namespace_from_protobuf(std::string_view body, std::string* error) {
  auto envelope = open_envelope(body, error);
  if (!envelope) return std::nullopt;
  const std::string &api_version = envelope->api_version, &kind = envelope->kind;
  if (kind != "Namespace" || (api_version != "v1" && !api_version.empty())) {
    return *error = "a protobuf body is taken only for a v1 Namespace, not " + api_version + " " + kind, std::nullopt;
  }
  JsonValue ns = JsonValue::object();
  ns.set("apiVersion", JsonValue::string("v1"));
  ns.set("kind", JsonValue::string("Namespace"));
  bool ok = ProtoReader(envelope->raw).each_bytes([&](uint64_t f, std::string_view v) {
    if (f == 1) return read_meta(v, &ns.at("metadata"));
    if (f == 2) {
      JsonValue& spec = ns.at("spec");
      spec = JsonValue::object();
      return ProtoReader(v).each_bytes([&](uint64_t sf, std::string_view sv) {
        if (sf == 1) append(spec.at("finalizers"), sv);
        return true;
      });
    }
    return true;
  });
  if (!ok) return *error = "malformed protobuf Namespace", std::nullopt;
  return ns;
}

std::optional<JsonValue> self_review_from_protobuf(std::string_view body, std::string* error) {
  auto envelope = open_envelope(body, error);
  if (!envelope) return std::nullopt;
  const std::string& kind = envelope->kind;
  JsonValue review = JsonValue::object();
  review.set("apiVersion", JsonValue::string(envelope->api_version));
  review.set("kind", JsonValue::string(kind));
  JsonValue spec = JsonValue::object();
  bool ok = true;
  if (kind == "SelfSubjectAccessReview") {
    // spec: resourceAttributes 1, nonResourceAttributes 2.
    ok = ProtoReader(envelope->raw).each_bytes([&](uint64_t f, std::string_view v) {
      if (f != 2) return true;
      return ProtoReader(v).each_bytes([&](uint64_t sf, std::string_view sv) {
        if (sf == 1) {
          return read_strings(sv, {"namespace", "verb", "group", "version", "resource", "subresource", "name"},
                              &spec.at("resourceAttributes"));
        }
        if (sf == 2) return read_strings(sv, {"path", "verb"}, &spec.at("nonResourceAttributes"));
        return true;
      });
    });
  } else if (kind == "SelfSubjectRulesReview") {
    ok = ProtoReader(envelope->raw).each_bytes([&](uint64_t f, std::string_view v) {
      return f != 2 || read_strings(v, {"namespace"}, &spec);
    });
  } else if (kind != "SelfSubjectReview") {  // which has nothing to read
    return *error = "a protobuf body is taken here only for a self review, not " + kind, std::nullopt;
  }
  if (!ok) return *error = "malformed protobuf " + kind, std::nullopt;
  review.set("spec", std::move(spec));
  return review;
}

}  // namespace uvsched
