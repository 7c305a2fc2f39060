#include "handlers/pods/field_manager.h"

#include <algorithm>
#include <string_view>

#include "handlers/pods/strategic_merge.h"

namespace uvsched {
namespace {

constexpr std::string_view kServerMetadata[] = {"name",
                                                "namespace",
                                                "uid",
                                                "resourceVersion",
                                                "creationTimestamp",
                                                "generation",
                                                "deletionTimestamp",
                                                "deletionGracePeriodSeconds",
                                                "managedFields",
                                                "selfLink"};

bool server_metadata(std::string_view key) {
  return std::find(std::begin(kServerMetadata), std::end(kServerMetadata), key) != std::end(kServerMetadata);
}

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty()) return out;
  for (size_t from = 0;;) {
    size_t at = path.find(FieldSet::kSep, from);
    out.push_back(path.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

void push(std::string& path, std::string_view element) {
  if (!path.empty()) path += FieldSet::kSep;
  path += element;
}

std::string member_path(std::string_view dotted, std::string_view key) {
  std::string out(dotted);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

// A keyed list element's name: k:{"name":"c"}.
std::optional<std::string> element_name(const JsonValue& item, std::string_view key) {
  if (key.empty()) return "v:" + item.dump();
  const JsonValue* v = item.is_object() ? item.get(key) : nullptr;
  if (v == nullptr) return std::nullopt;
  std::string out = "k:{\"";
  out += key;
  out += "\":";
  v->append_to(out);
  out += '}';
  return out;
}

// Adds the fields `v` (at `path`, the pod's `dotted` field) sets.
void collect(const JsonValue& v, std::string& path, const std::string& dotted, std::set<FieldSet::Path>& out) {
  if (v.is_object() && !v.members().empty()) {
    for (const auto& [k, child] : v.members()) {
      size_t mark = path.size();
      push(path, "f:" + k);
      collect(child, path, member_path(dotted, k), out);
      path.resize(mark);
    }
    return;
  }
  if (v.is_array() && !v.items().empty()) {
    if (auto key = list_merge_key(dotted)) {
      bool keyed = true;
      for (const auto& item : v.items()) keyed = keyed && element_name(item, *key).has_value();
      if (keyed) {
        for (const auto& item : v.items()) {
          size_t mark = path.size();
          push(path, *element_name(item, *key));
          if (key->empty()) {
            out.insert(path);
          } else {
            out.insert(path + FieldSet::kSep + ".");
            collect(item, path, dotted, out);
          }
          path.resize(mark);
        }
        return;
      }
    }
  }
  out.insert(path);  // a leaf: a scalar, an empty object or list, a list set whole
}

const JsonValue* step(const JsonValue& cur, std::string_view element) {
  if (element.size() < 2 || element[1] != ':') return nullptr;
  std::string_view rest = element.substr(2);
  if (element[0] == 'f') return cur.is_object() ? cur.get(rest) : nullptr;
  if (!cur.is_array()) return nullptr;
  std::string error;
  auto want = JsonValue::parse(rest, &error);
  if (!want) return nullptr;
  for (const auto& item : cur.items()) {
    if (element[0] == 'v' && item.same_as(*want)) return &item;
    if (element[0] == 'k' && want->is_object() && item.is_object()) {
      bool all = !want->members().empty();
      for (const auto& [k, v] : want->members()) {
        const JsonValue* have = item.get(k);
        all = all && have != nullptr && have->same_as(v);
      }
      if (all) return &item;
    }
  }
  return nullptr;
}

// step() only looks; its answer in a tree we may change is ours to change.
JsonValue* step(JsonValue& cur, std::string_view element) {
  return const_cast<JsonValue*>(step(static_cast<const JsonValue&>(cur), element));
}

// Removes what `path` names from `object`, when it is there.
void remove_at(JsonValue& object, const FieldSet::Path& path) {
  auto elements = split(path);
  if (!elements.empty() && elements.back() == ".") elements.pop_back();
  if (elements.empty()) return;
  JsonValue* cur = &object;
  for (size_t i = 0; i + 1 < elements.size() && cur != nullptr; ++i) cur = step(*cur, elements[i]);
  if (cur == nullptr) return;
  std::string_view last = elements.back();
  if (last.substr(0, 2) == "f:") {
    if (cur->is_object()) cur->erase(last.substr(2));
    return;
  }
  const JsonValue* target = step(*cur, last);
  if (target == nullptr) return;
  auto& items = cur->items();
  items.erase(items.begin() + (target - items.data()));
}

// Merges `config` into `live` as apply does: objects field by field, keyed
// lists element by element, sets as sets, anything else replaced.
void merge_into(JsonValue& live, const JsonValue& config, const std::string& dotted) {
  if (!config.is_object() || !live.is_object()) {
    live = config;
    return;
  }
  for (const auto& [k, v] : config.members()) {
    std::string d = member_path(dotted, k);
    JsonValue* cur = live.get(k);
    if (cur == nullptr) {
      live.set(k, v);
    } else if (v.is_object() && cur->is_object()) {
      merge_into(*cur, v, d);
    } else if (auto key = v.is_array() && cur->is_array() ? list_merge_key(d) : std::nullopt) {
      for (const auto& item : v.items()) {
        auto name = element_name(item, *key);
        JsonValue* found = name ? step(*cur, *name) : nullptr;
        if (found == nullptr) {
          cur->push(item);
        } else if (!key->empty()) {
          merge_into(*found, item, d);
        }
      }
    } else {
      *cur = v;
    }
  }
}

// The config as apply reads it: what the server sets, and the status, are not the applier's.
JsonValue applied_part(const JsonValue& config) {
  JsonValue out = config;
  out.erase("status");
  if (JsonValue* meta = out.get("metadata"); meta != nullptr && meta->is_object()) {
    for (std::string_view k : kServerMetadata) {
      if (k != "name" && k != "namespace") meta->erase(k);
    }
  }
  return out;
}

void drop_absent(FieldSet& set, const JsonValue& object) {
  std::vector<FieldSet::Path> gone;
  for (const auto& p : set.paths()) {
    if (value_at(object, p) == nullptr) gone.push_back(p);
  }
  for (const auto& p : gone) set.remove(p);
}

}  // namespace

FieldSet FieldSet::of_pod(const JsonValue& pod) {
  FieldSet out;
  if (!pod.is_object()) return out;
  std::string path;
  for (const auto& [k, v] : pod.members()) {
    if (k == "apiVersion" || k == "kind" || k == "status") continue;
    path = "f:" + k;
    if (k == "metadata" && v.is_object()) {
      for (const auto& [mk, mv] : v.members()) {
        if (server_metadata(mk)) continue;
        path = "f:metadata";
        push(path, "f:" + mk);
        collect(mv, path, "metadata." + mk, out.paths_);
      }
      continue;
    }
    collect(v, path, k, out.paths_);
  }
  return out;
}

std::optional<FieldSet> FieldSet::from_v1(const JsonValue& v1) {
  FieldSet out;
  struct Walk {
    FieldSet& out;
    bool operator()(const JsonValue& node, std::string& path) {
      if (!node.is_object()) return false;
      for (const auto& [k, child] : node.members()) {
        if (k == ".") {
          if (path.empty()) return false;
          out.add(path + kSep + ".");
          continue;
        }
        if (k.size() < 2 || k[1] != ':' || std::string_view("fkv").find(k[0]) == std::string_view::npos ||
            k.find(kSep) != std::string::npos) {
          return false;
        }
        if (!child.is_object()) return false;
        size_t mark = path.size();
        push(path, k);
        if (child.members().empty()) {
          out.add(path);
        } else if (!(*this)(child, path)) {
          return false;
        }
        path.resize(mark);
      }
      return true;
    }
  };
  std::string path;
  if (!Walk{out}(v1, path)) return std::nullopt;
  return out;
}

JsonValue FieldSet::to_v1() const {
  JsonValue root = JsonValue::object();
  for (const auto& p : paths_) {
    JsonValue* cur = &root;
    for (std::string_view element : split(p)) {
      JsonValue& next = cur->at(element);
      if (!next.is_object()) next = JsonValue::object();
      cur = &next;
    }
  }
  return root;
}

const JsonValue* value_at(const JsonValue& object, const FieldSet::Path& path) {
  const JsonValue* cur = &object;
  for (std::string_view element : split(path)) {
    if (element == ".") return cur;
    cur = step(*cur, element);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::string display_path(const FieldSet::Path& path) {
  std::string out;
  for (std::string_view element : split(path)) {
    if (element == ".") continue;
    std::string_view rest = element.substr(std::min<size_t>(2, element.size()));
    if (element[0] == 'f') {
      out += '.';
      out += rest;
      continue;
    }
    std::string error;
    auto v = JsonValue::parse(rest, &error);
    out += '[';
    if (element[0] == 'k' && v && v->is_object()) {
      bool first = true;
      for (const auto& [k, kv] : v->members()) {
        if (!first) out += ',';
        first = false;
        out += k + "=" + kv.dump();
      }
    } else {
      out += "=";
      out += rest;
    }
    out += ']';
  }
  return out;
}

std::vector<ManagedEntry> managed_entries(const JsonValue& pod) {
  std::vector<ManagedEntry> out;
  const JsonValue* list = pod.find({"metadata", "managedFields"});
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& e : list->items()) {
    if (!e.is_object()) continue;
    const JsonValue* v1 = e.get("fieldsV1");
    auto fields = v1 ? FieldSet::from_v1(*v1) : std::optional<FieldSet>(FieldSet{});
    if (!fields || e.str("manager").empty()) continue;
    out.push_back({e.str("manager"), e.str("operation"), e.str("time"), e.str("subresource"), std::move(*fields)});
  }
  return out;
}

void set_managed_entries(JsonValue& pod, const std::vector<ManagedEntry>& entries) {
  JsonValue list = JsonValue::array();
  for (const auto& e : entries) {
    if (e.fields.empty()) continue;
    JsonValue o = JsonValue::object();
    o.set("manager", JsonValue::string(e.manager));
    o.set("operation", JsonValue::string(e.operation));
    o.set("apiVersion", JsonValue::string("v1"));
    o.set("time", JsonValue::string(e.time));
    o.set("fieldsType", JsonValue::string("FieldsV1"));
    o.set("fieldsV1", e.fields.to_v1());
    if (!e.subresource.empty()) o.set("subresource", JsonValue::string(e.subresource));
    list.push(std::move(o));
  }
  JsonValue& meta = pod.ensure({"metadata"});
  if (list.items().empty()) {
    meta.erase("managedFields");
  } else {
    meta.set("managedFields", std::move(list));
  }
}

std::vector<ApplyConflict> apply_config(JsonValue& live, const JsonValue& config, const std::string& manager,
                                        bool force, const std::string& now) {
  JsonValue applied = applied_part(config);
  FieldSet mine = FieldSet::of_pod(applied);
  auto entries = managed_entries(live);
  auto own = std::find_if(entries.begin(), entries.end(),
                          [&](const ManagedEntry& e) { return e.manager == manager && e.operation == "Apply"; });
  FieldSet before = own != entries.end() ? own->fields : FieldSet{};
  std::vector<ApplyConflict> conflicts;
  std::vector<std::pair<size_t, FieldSet::Path>> taken;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (own != entries.end() && i == static_cast<size_t>(own - entries.begin())) continue;
    for (const auto& p : mine.paths()) {
      if (!entries[i].fields.contains(p) || p.back() == '.') continue;
      const JsonValue* want = value_at(applied, p);
      const JsonValue* have = value_at(live, p);
      if (want == nullptr) continue;  // a key given twice: its first value is the one that counts
      if (have == nullptr || !have->same_as(*want)) {
        conflicts.push_back({entries[i].manager, p});
        taken.emplace_back(i, p);
      }
    }
  }
  if (!conflicts.empty() && !force) return conflicts;
  for (const auto& [i, p] : taken) entries[i].fields.remove(p);

  merge_into(live, applied, "");
  // What this manager set before and sets no more goes, unless another
  // manager set it too. Deepest first, so an element goes after its fields.
  std::vector<FieldSet::Path> gone;
  for (const auto& p : before.paths()) {
    if (mine.contains(p)) continue;
    bool shared = false;
    for (size_t i = 0; i < entries.size() && !shared; ++i) {
      shared = !(entries[i].manager == manager && entries[i].operation == "Apply") && entries[i].fields.contains(p);
    }
    if (!shared) gone.push_back(p);
  }
  std::sort(gone.begin(), gone.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& p : gone) remove_at(live, p);

  own = std::find_if(entries.begin(), entries.end(),
                     [&](const ManagedEntry& e) { return e.manager == manager && e.operation == "Apply"; });
  if (own == entries.end()) {
    entries.push_back({manager, "Apply", now, "", std::move(mine)});
  } else {
    own->fields = std::move(mine);
    own->time = now;
  }
  for (auto& e : entries) drop_absent(e.fields, live);
  set_managed_entries(live, entries);
  return {};
}

void record_update(const JsonValue* old, JsonValue& next, const std::string& manager, const std::string& now) {
  auto entries = managed_entries(next);
  if (manager.empty() && entries.empty()) return;  // nobody's fields to follow: the common, cheap case
  FieldSet changed;
  if (!manager.empty() && old == nullptr) {
    changed = FieldSet::of_pod(next);  // a create: all it sets is new (and no path need be looked up)
  } else if (!manager.empty()) {
    const FieldSet now_set = FieldSet::of_pod(next);
    for (const auto& p : now_set.paths()) {
      const JsonValue* was = old ? value_at(*old, p) : nullptr;
      const JsonValue* is = value_at(next, p);
      if (is == nullptr) continue;  // a key given twice: its first value is the one that counts
      if (was == nullptr || (p.back() != '.' && !was->same_as(*is))) changed.add(p);
    }
  }
  bool found = false;
  for (auto& e : entries) {
    if (e.manager == manager && e.operation == "Update" && e.subresource.empty()) {
      for (const auto& p : changed.paths()) e.fields.add(p);
      e.time = now;
      found = true;
    } else {
      for (const auto& p : changed.paths()) e.fields.remove(p);
    }
    drop_absent(e.fields, next);
  }
  if (!found && !changed.empty()) entries.push_back({manager, "Update", now, "", std::move(changed)});
  set_managed_entries(next, entries);
}

std::string apply_conflict_message(const std::vector<ApplyConflict>& conflicts) {
  std::string out = "Apply failed with " + std::to_string(conflicts.size()) +
                    (conflicts.size() == 1 ? " conflict: " : " conflicts: ");
  if (conflicts.size() == 1) {
    return out + "conflict with \"" + conflicts[0].manager + "\" using v1: " + display_path(conflicts[0].path);
  }
  // Grouped by manager, in the order they were found, as the API server lists them.
  std::vector<std::string> managers;
  for (const auto& c : conflicts) {
    if (std::find(managers.begin(), managers.end(), c.manager) == managers.end()) managers.push_back(c.manager);
  }
  for (size_t m = 0; m < managers.size(); ++m) {
    if (m > 0) out += "\n";
    std::vector<std::string> paths;
    for (const auto& c : conflicts) {
      if (c.manager == managers[m]) paths.push_back(display_path(c.path));
    }
    out += "conflict" + std::string(paths.size() == 1 ? "" : "s") + " with \"" + managers[m] + "\" using v1:";
    if (paths.size() == 1) {
      out += " " + paths[0];
    } else {
      for (const auto& p : paths) out += "\n- " + p;
    }
  }
  return out;
}

}  // namespace uvsched
