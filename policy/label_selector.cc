#include "policy/label_selector.h"

#include <algorithm>
#include <cctype>

namespace uvsched {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool valid_key(std::string_view k) {
  if (k.empty() || k.size() > 316) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

bool valid_value(std::string_view v) {
  if (v.size() > 63) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// Splits on commas that are not inside parentheses.
std::vector<std::string_view> split_terms(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

std::optional<LabelSelector> LabelSelector::parse(std::string_view text, std::string* error) {
  LabelSelector sel;
  text = trim(text);
  if (text.empty()) return sel;
  for (std::string_view term : split_terms(text)) {
    term = trim(term);
    Requirement r;
    auto fail = [&](std::string why) {
      *error = "invalid label selector term '" + std::string(term) + "': " + why;
      return std::nullopt;
    };
    if (term.empty()) return fail("empty term");
    size_t in_pos = std::string_view::npos;
    bool notin = false;
    for (std::string_view word : {std::string_view(" notin "), std::string_view(" in ")}) {
      size_t p = term.find(word);
      if (p != std::string_view::npos) {
        in_pos = p;
        notin = word == " notin ";
        r.key = std::string(trim(term.substr(0, p)));
        std::string_view rest = trim(term.substr(p + word.size()));
        if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return fail("expected a (value, ...) list");
        rest = rest.substr(1, rest.size() - 2);
        for (std::string_view v : split_terms(rest)) {
          v = trim(v);
          if (!valid_value(v)) return fail("invalid value '" + std::string(v) + "'");
          r.values.emplace_back(v);
        }
        r.op = notin ? Requirement::Op::kNotIn : Requirement::Op::kIn;
        break;
      }
    }
    if (in_pos == std::string_view::npos) {
      size_t ne = term.find("!=");
      size_t eq = term.find('=');
      if (ne != std::string_view::npos) {
        r.key = std::string(trim(term.substr(0, ne)));
        r.values.emplace_back(trim(term.substr(ne + 2)));
        r.op = Requirement::Op::kNotEquals;
      } else if (eq != std::string_view::npos) {
        bool dbl = eq + 1 < term.size() && term[eq + 1] == '=';
        r.key = std::string(trim(term.substr(0, eq)));
        r.values.emplace_back(trim(term.substr(eq + (dbl ? 2 : 1))));
        r.op = Requirement::Op::kEquals;
      } else if (term.front() == '!') {
        r.key = std::string(trim(term.substr(1)));
        r.op = Requirement::Op::kNotExists;
      } else {
        r.key = std::string(term);
        r.op = Requirement::Op::kExists;
      }
      for (const auto& v : r.values) {
        if (!valid_value(v)) return fail("invalid value '" + v + "'");
      }
    }
    if (!valid_key(r.key)) return fail("invalid key '" + r.key + "'");
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

LabelSelector LabelSelector::equals_all(const Labels& required) {
  LabelSelector sel;
  for (const auto& [k, v] : required) sel.reqs_.push_back({k, Requirement::Op::kEquals, {v}});
  return sel;
}

void LabelSelector::require(std::string key, SetOp op, std::vector<std::string> values) {
  Requirement::Op as = Requirement::Op::kIn;
  switch (op) {
    case SetOp::kIn:
      as = Requirement::Op::kIn;
      break;
    case SetOp::kNotIn:
      as = Requirement::Op::kNotIn;
      break;
    case SetOp::kExists:
      as = Requirement::Op::kExists;
      break;
    case SetOp::kDoesNotExist:
      as = Requirement::Op::kNotExists;
      break;
  }
  reqs_.push_back({std::move(key), as, std::move(values)});
}

bool LabelSelector::matches(const Labels& labels) const {
  for (const auto& r : reqs_) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    switch (r.op) {
      case Requirement::Op::kEquals:
      case Requirement::Op::kIn:
        if (!in) return false;
        break;
      case Requirement::Op::kNotEquals:
      case Requirement::Op::kNotIn:
        if (in) return false;  // a missing key satisfies != and notin, as in Kubernetes
        break;
      case Requirement::Op::kExists:
        if (!has) return false;
        break;
      case Requirement::Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

std::optional<std::vector<FieldRequirement>> parse_field_selector(std::string_view text,
                                                                  const std::vector<std::string>& supported,
                                                                  std::string* error) {
  std::vector<FieldRequirement> out;
  text = trim(text);
  if (text.empty()) return out;
  for (std::string_view term : split_terms(text)) {
    term = trim(term);
    FieldRequirement r;
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne != std::string_view::npos) {
      r.key = std::string(trim(term.substr(0, ne)));
      r.value = std::string(trim(term.substr(ne + 2)));
      r.negate = true;
    } else if (eq != std::string_view::npos) {
      bool dbl = eq + 1 < term.size() && term[eq + 1] == '=';
      r.key = std::string(trim(term.substr(0, eq)));
      r.value = std::string(trim(term.substr(eq + (dbl ? 2 : 1))));
    } else {
      *error = "invalid field selector term '" + std::string(term) + "': expected key=value or key!=value";
      return std::nullopt;
    }
    if (std::find(supported.begin(), supported.end(), r.key) == supported.end()) {
      *error = "field label not supported: " + r.key;
      return std::nullopt;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace uvsched
