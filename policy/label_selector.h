// Kubernetes label selectors ("app=demo,tier!=db,env in (a,b),!legacy,gpu")
// and the simple field selectors the pod list accepts ("spec.nodeName=n1").
// Pure: parse once, match many.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uvsched {

using Labels = std::map<std::string, std::string, std::less<>>;

class LabelSelector {
 public:
  // nullopt (with *error) on a malformed selector. "" selects everything.
  static std::optional<LabelSelector> parse(std::string_view text, std::string* error);
  // Every key=value of a map must match (nodeSelector semantics).
  static LabelSelector equals_all(const Labels& required);
  // One of a metav1.LabelSelector's matchExpressions, added to what this
  // selector requires (its matchLabels: equals_all). Values are not checked
  // here: the object's validation does that.
  enum class SetOp { kIn, kNotIn, kExists, kDoesNotExist };
  void require(std::string key, SetOp op, std::vector<std::string> values);

  bool matches(const Labels& labels) const;
  bool empty() const { return reqs_.empty(); }

 private:
  struct Requirement {
    enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  std::vector<Requirement> reqs_;
};

// "key=value" / "key==value" / "key!=value", comma-separated; each key must be
// one the caller supports.
struct FieldRequirement {
  std::string key;
  std::string value;
  bool negate = false;
};
std::optional<std::vector<FieldRequirement>> parse_field_selector(std::string_view text,
                                                                  const std::vector<std::string>& supported,
                                                                  std::string* error);

}  // namespace uvsched
