#include "handlers/pods/label_selector_json.h"

#include <string>
#include <vector>

namespace uvsched {

std::optional<LabelSelector> label_selector_of(const JsonValue* sel) {
  if (!sel || !sel->is_object()) return std::nullopt;
  Labels equal;
  if (const JsonValue* ml = sel->get("matchLabels"); ml && ml->is_object()) {
    for (const auto& [k, v] : ml->members()) equal.emplace(k, v.is_string() ? v.text() : "");
  }
  LabelSelector out = LabelSelector::equals_all(equal);
  if (const JsonValue* exprs = sel->get("matchExpressions"); exprs && exprs->is_array()) {
    for (const auto& e : exprs->items()) {
      std::string op = e.str("operator");
      LabelSelector::SetOp as = op == "In"       ? LabelSelector::SetOp::kIn
                                : op == "NotIn"  ? LabelSelector::SetOp::kNotIn
                                : op == "Exists" ? LabelSelector::SetOp::kExists
                                                 : LabelSelector::SetOp::kDoesNotExist;
      std::vector<std::string> values;
      if (const JsonValue* vs = e.get("values"); vs && vs->is_array()) {
        for (const auto& v : vs->items()) values.push_back(v.is_string() ? v.text() : "");
      }
      out.require(e.str("key"), as, std::move(values));
    }
  }
  return out;
}

}  // namespace uvsched
