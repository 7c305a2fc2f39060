#include "handlers/pods/json_patch.h"

#include <optional>
#include <string_view>
#include <vector>

namespace uvsched {
namespace {

// RFC 6901: "/a/b~1c/0" -> {"a", "b/c", "0"}; nullopt when not a pointer.
std::optional<std::vector<std::string>> split_pointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;  // the whole document
  if (pointer[0] != '/') return std::nullopt;
  std::string cur;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(cur));
      cur.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) return std::nullopt;
      cur += pointer[++i] == '0' ? '~' : '/';
    } else {
      cur += pointer[i];
    }
  }
  return tokens;
}

// An array index token: digits only, no leading zero; nullopt otherwise.
std::optional<size_t> index_of(const std::string& token) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

JsonValue* child(JsonValue& v, const std::string& token) {
  if (v.is_object()) return v.get(token);
  if (v.is_array()) {
    auto i = index_of(token);
    return i && *i < v.items().size() ? &v.items()[*i] : nullptr;
  }
  return nullptr;
}

JsonValue* resolve(JsonValue& doc, const std::vector<std::string>& tokens, size_t count) {
  JsonValue* cur = &doc;
  for (size_t i = 0; i < count && cur; ++i) cur = child(*cur, tokens[i]);
  return cur;
}

class Patcher {
 public:
  Patcher(JsonValue& doc, std::string* error) : doc_(doc), error_(error) {}

  bool apply(const JsonValue& op, size_t n) {
    where_ = "operation " + std::to_string(n);
    if (!op.is_object()) return fail("is not an object");
    std::string name = op.str("op");
    const JsonValue* path = op.get("path");
    if (!path || !path->is_string()) return fail("has no \"path\"");
    auto tokens = split_pointer(path->text());
    if (!tokens) return fail("\"path\" is not a JSON pointer: " + path->text());
    where_ += " (" + name + " " + path->text() + ")";
    const JsonValue* value = op.get("value");
    if (name == "add" || name == "replace" || name == "test") {
      if (!value) return fail("has no \"value\"");
    }
    if (name == "add") return add(*tokens, *value);
    if (name == "remove") return remove(*tokens, nullptr);
    if (name == "replace") return replace(*tokens, *value);
    if (name == "test") return test(*tokens, *value);
    if (name == "move" || name == "copy") {
      const JsonValue* from = op.get("from");
      auto from_tokens = from && from->is_string() ? split_pointer(from->text()) : std::nullopt;
      if (!from_tokens) return fail("has no \"from\" JSON pointer");
      JsonValue* source = resolve(doc_, *from_tokens, from_tokens->size());
      if (!source) return fail("\"from\" names nothing: " + from->text());
      if (name == "copy") return add(*tokens, JsonValue(*source));
      if (path->text().compare(0, from->text().size() + 1, from->text() + "/") == 0) {
        return fail("cannot move a value into itself");
      }
      JsonValue moved;
      return remove(*from_tokens, &moved) && add(*tokens, std::move(moved));
    }
    return fail("has an unknown op \"" + name + "\"");
  }

 private:
  bool fail(const std::string& why) {
    *error_ = where_ + ": " + why;
    return false;
  }

  JsonValue* parent_of(const std::vector<std::string>& tokens) {
    return tokens.empty() ? nullptr : resolve(doc_, tokens, tokens.size() - 1);
  }

  bool add(const std::vector<std::string>& tokens, JsonValue value) {
    if (tokens.empty()) {
      doc_ = std::move(value);
      return true;
    }
    JsonValue* parent = parent_of(tokens);
    if (!parent) return fail("the parent of the path does not exist");
    const std::string& last = tokens.back();
    if (parent->is_object()) {
      parent->set(last, std::move(value));
      return true;
    }
    if (!parent->is_array()) return fail("the parent of the path is not an object or a list");
    auto& items = parent->items();
    auto at = last == "-" ? std::optional<size_t>(items.size()) : index_of(last);
    if (!at || *at > items.size()) return fail("the index is out of range");
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(*at), std::move(value));
    return true;
  }

  bool remove(const std::vector<std::string>& tokens, JsonValue* removed) {
    JsonValue* parent = parent_of(tokens);
    JsonValue* target = parent ? child(*parent, tokens.back()) : nullptr;
    if (!target) return fail("the path does not exist");
    if (removed) *removed = std::move(*target);
    if (parent->is_object()) {
      parent->erase(tokens.back());
    } else {
      parent->items().erase(parent->items().begin() + static_cast<std::ptrdiff_t>(*index_of(tokens.back())));
    }
    return true;
  }

  bool replace(const std::vector<std::string>& tokens, const JsonValue& value) {
    JsonValue* target = resolve(doc_, tokens, tokens.size());
    if (!target) return fail("the path does not exist");
    *target = value;
    return true;
  }

  bool test(const std::vector<std::string>& tokens, const JsonValue& value) {
    JsonValue* target = resolve(doc_, tokens, tokens.size());
    if (!target) return fail("the path does not exist");
    if (!target->same_as(value)) return fail("the value differs: " + target->dump());
    return true;
  }

  JsonValue& doc_;
  std::string* error_;
  std::string where_;
};

}  // namespace

bool apply_json_patch(JsonValue& doc, const JsonValue& patch, std::string* error) {
  if (!patch.is_array()) {
    *error = "a JSON patch must be a list of operations";
    return false;
  }
  Patcher p(doc, error);
  for (size_t i = 0; i < patch.items().size(); ++i) {
    if (!p.apply(patch.items()[i], i)) return false;
  }
  return true;
}

}  // namespace uvsched
