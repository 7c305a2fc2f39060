#include "handlers/pods/strategic_merge.h"

#include <algorithm>
#include <vector>

namespace uvsched {
namespace {

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kOrderPrefix = "$setElementOrder/";
constexpr std::string_view kDeletePrefix = "$deleteFromPrimitiveList/";

// The lists of a pod that merge, from the patchMergeKey / patchStrategy tags
// of the core/v1 types. An empty key: a list of scalars merged as a set.
// Container paths are written once, for "spec.containers"; init and
// ephemeral containers share them (see rule_for).
struct ListRule {
  std::string_view path;
  std::string_view key;
};
constexpr ListRule kListRules[] = {
    {"metadata.finalizers", ""},
    {"metadata.ownerReferences", "uid"},
    {"spec.containers", "name"},
    {"spec.containers.env", "name"},
    {"spec.containers.ports", "containerPort"},
    {"spec.containers.volumeMounts", "mountPath"},
    {"spec.containers.volumeDevices", "devicePath"},
    {"spec.volumes", "name"},
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.resourceClaims", "name"},
    {"spec.schedulingGates", "name"},
    {"status.conditions", "type"},
    {"status.podIPs", "ip"},
    {"status.hostIPs", "ip"},
};

const ListRule* rule_for(std::string_view path) {
  std::string normal(path);
  for (std::string_view kind : {"spec.initContainers", "spec.ephemeralContainers"}) {
    if (normal.compare(0, kind.size(), kind) == 0 && (normal.size() == kind.size() || normal[kind.size()] == '.')) {
      normal.replace(0, kind.size(), "spec.containers");
    }
  }
  for (const ListRule& r : kListRules) {
    if (r.path == normal) return &r;
  }
  return nullptr;
}

std::string child(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string directive_of(const JsonValue& v) {
  const JsonValue* d = v.is_object() ? v.get(kPatch) : nullptr;
  return d ? d->text() : "";
}

// An element's identity in a keyed list: its key's value, as JSON (so 80 and
// "80" stay apart). Empty when it has none.
std::string identity(const JsonValue& element, std::string_view key) {
  if (key.empty()) return element.dump();
  const JsonValue* v = element.is_object() ? element.get(key) : nullptr;
  return v ? v->dump() : "";
}

bool merge_map(JsonValue& target, const JsonValue& patch, std::string_view path, std::string* error);

bool merge_keyed_list(JsonValue& list, const JsonValue& patch, const ListRule& rule, const std::string& path,
                      std::string* error) {
  bool replace = std::any_of(patch.items().begin(), patch.items().end(),
                             [](const JsonValue& e) { return directive_of(e) == "replace"; });
  if (replace) list = JsonValue::array();
  for (const JsonValue& e : patch.items()) {
    std::string directive = directive_of(e);
    if (directive == "replace") continue;
    std::string id = identity(e, rule.key);
    if (id.empty()) {
      *error = path + ": an element has no \"" + std::string(rule.key) + "\", the list's merge key";
      return false;
    }
    auto& items = list.items();
    auto at = std::find_if(items.begin(), items.end(), [&](const JsonValue& x) { return identity(x, rule.key) == id; });
    if (directive == "delete") {
      if (at != items.end()) items.erase(at);
      continue;
    }
    if (at == items.end()) {
      JsonValue fresh = JsonValue::object();  // merging into nothing drops the patch's directives
      if (!merge_map(fresh, e, path, error)) return false;
      items.push_back(std::move(fresh));
    } else if (!merge_map(*at, e, path, error)) {
      return false;
    }
  }
  return true;
}

void merge_set(JsonValue& list, const JsonValue& patch) {
  for (const JsonValue& e : patch.items()) {
    std::string id = e.dump();
    auto& items = list.items();
    if (std::none_of(items.begin(), items.end(), [&](const JsonValue& x) { return x.dump() == id; }))
      items.push_back(e);
  }
}

// Elements named in `order` first, in its order; the rest after, as they were.
void reorder(JsonValue& list, const JsonValue& order, std::string_view key) {
  auto& items = list.items();
  std::vector<bool> placed(items.size(), false);
  std::vector<JsonValue> out;
  out.reserve(items.size());
  for (const JsonValue& o : order.items()) {
    std::string id = identity(o, key);
    for (size_t i = 0; i < items.size(); ++i) {
      if (!placed[i] && identity(items[i], key) == id) {
        out.push_back(std::move(items[i]));
        placed[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (!placed[i]) out.push_back(std::move(items[i]));
  }
  items = std::move(out);
}

bool apply_list_directives(JsonValue& target, const JsonValue& patch, std::string_view path, std::string* error) {
  for (const auto& [k, v] : patch.members()) {
    bool order = starts_with(k, kOrderPrefix), remove = starts_with(k, kDeletePrefix);
    if (!order && !remove) continue;
    std::string_view field = std::string_view(k).substr(order ? kOrderPrefix.size() : kDeletePrefix.size());
    if (!v.is_array()) {
      *error = child(path, k) + " must be a list";
      return false;
    }
    JsonValue* list = target.get(field);
    if (!list || !list->is_array()) continue;
    if (remove) {
      for (const JsonValue& gone : v.items()) {
        std::string id = gone.dump();
        auto& items = list->items();
        items.erase(std::remove_if(items.begin(), items.end(), [&](const JsonValue& x) { return x.dump() == id; }),
                    items.end());
      }
    } else {
      const ListRule* rule = rule_for(child(path, field));
      reorder(*list, v, rule ? rule->key : std::string_view());
    }
  }
  return true;
}

bool merge_map(JsonValue& target, const JsonValue& patch, std::string_view path, std::string* error) {
  std::string directive = directive_of(patch);
  if (!directive.empty() && directive != "replace" && directive != "merge" && directive != "delete") {
    *error = "unknown $patch directive \"" + directive + "\" at " + (path.empty() ? "the top" : std::string(path));
    return false;
  }
  if (!target.is_object() || directive == "replace") target = JsonValue::object();
  for (const auto& [k, v] : patch.members()) {
    if (starts_with(k, "$")) continue;  // directives: $patch above, the list ones below
    std::string sub = child(path, k);
    if (v.is_null() || directive_of(v) == "delete") {
      target.erase(k);
    } else if (v.is_object()) {
      if (!merge_map(target.at(k), v, sub, error)) return false;
    } else if (const ListRule* rule = v.is_array() ? rule_for(sub) : nullptr) {
      JsonValue& list = target.at(k);
      if (!list.is_array()) list = JsonValue::array();
      if (rule->key.empty()) {
        merge_set(list, v);
      } else if (!merge_keyed_list(list, v, *rule, sub, error)) {
        return false;
      }
    } else {
      target.set(k, v);
    }
  }
  if (!apply_list_directives(target, patch, path, error)) return false;
  if (const JsonValue* keep = patch.get(kRetainKeys)) {
    if (!keep->is_array()) {
      *error = child(path, kRetainKeys) + " must be a list";
      return false;
    }
    auto& members = target.members();
    members.erase(std::remove_if(members.begin(), members.end(),
                                 [&](const auto& m) {
                                   return std::none_of(keep->items().begin(), keep->items().end(),
                                                       [&](const JsonValue& name) { return name.text() == m.first; });
                                 }),
                  members.end());
  }
  return true;
}

}  // namespace

std::optional<std::string_view> list_merge_key(std::string_view path) {
  const ListRule* rule = rule_for(path);
  if (rule == nullptr) return std::nullopt;
  return rule->key;
}

bool strategic_merge(JsonValue& target, const JsonValue& patch, std::string_view path, std::string* error) {
  if (!patch.is_object()) {
    *error = "a strategic merge patch must be an object";
    return false;
  }
  return merge_map(target, patch, path, error);
}

}  // namespace uvsched
