#include "policy/label_selector.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(LabelSelector, MatchesLikeKubernetes) {
  const Labels pod = {{"app", "demo"}, {"tier", "web"}, {"env", "prod"}};
  struct Case {
    const char* selector;
    bool match;
  } cases[] = {
      {"", true},
      {"app=demo", true},
      {"app==demo", true},
      {"app=other", false},
      {"app!=other", true},
      {"app!=demo", false},
      {"missing!=x", true},
      {"env in (prod, staging)", true},
      {"env in (staging)", false},
      {"env notin (staging,dev)", true},
      {"missing notin (a)", true},
      {"tier", true},
      {"missing", false},
      {"!missing", true},
      {"!tier", false},
      {"app=demo,tier=web,env in (prod)", true},
      {"app=demo,tier=db", false},
  };
  for (const auto& c : cases) {
    std::string error;
    auto sel = LabelSelector::parse(c.selector, &error);
    ASSERT_TRUE(sel) << c.selector << ": " << error;
    EXPECT_EQ(sel->matches(pod), c.match) << c.selector;
  }
}

TEST(LabelSelector, RejectsMalformedSelectors) {
  for (const char* bad : {"=x", "a b=c", "env in prod", "env in (a b)", ",", "app=demo,", "x=a?b"}) {
    std::string error;
    EXPECT_FALSE(LabelSelector::parse(bad, &error)) << bad;
    EXPECT_FALSE(error.empty());
  }
}

TEST(LabelSelector, NodeSelectorSemantics) {
  auto sel = LabelSelector::equals_all({{"zone", "edge"}, {"gpu", "true"}});
  EXPECT_TRUE(sel.matches({{"zone", "edge"}, {"gpu", "true"}, {"x", "y"}}));
  EXPECT_FALSE(sel.matches({{"zone", "edge"}}));
  EXPECT_TRUE(LabelSelector::equals_all({}).matches({}));
}

TEST(LabelSelector, MatchLabelsAndMatchExpressionsTogether) {
  auto sel = LabelSelector::equals_all({{"app", "web"}});
  sel.require("tier", LabelSelector::SetOp::kIn, {"front", "edge"});
  sel.require("env", LabelSelector::SetOp::kNotIn, {"dev"});
  sel.require("canary", LabelSelector::SetOp::kDoesNotExist, {});
  sel.require("team", LabelSelector::SetOp::kExists, {});
  EXPECT_TRUE(sel.matches({{"app", "web"}, {"tier", "edge"}, {"team", "a"}}));
  EXPECT_TRUE(sel.matches({{"app", "web"}, {"tier", "front"}, {"team", "a"}, {"env", "prod"}}));
  EXPECT_FALSE(sel.matches({{"app", "web"}, {"tier", "back"}, {"team", "a"}}));
  EXPECT_FALSE(sel.matches({{"app", "web"}, {"tier", "edge"}, {"team", "a"}, {"env", "dev"}}));
  EXPECT_FALSE(sel.matches({{"app", "web"}, {"tier", "edge"}, {"team", "a"}, {"canary", "1"}}));
  EXPECT_FALSE(sel.matches({{"app", "web"}, {"tier", "edge"}}));
  EXPECT_FALSE(sel.matches({{"app", "db"}, {"tier", "edge"}, {"team", "a"}}));
}

TEST(FieldSelector, SupportedKeysOnly) {
  std::string error;
  auto f = parse_field_selector("spec.nodeName=n1,status.phase!=Running", {"spec.nodeName", "status.phase"}, &error);
  ASSERT_TRUE(f) << error;
  ASSERT_EQ(f->size(), 2u);
  EXPECT_EQ((*f)[0].value, "n1");
  EXPECT_FALSE((*f)[0].negate);
  EXPECT_TRUE((*f)[1].negate);
  EXPECT_FALSE(parse_field_selector("spec.hostname=x", {"spec.nodeName"}, &error));
  EXPECT_NE(error.find("not supported"), std::string::npos);
  EXPECT_FALSE(parse_field_selector("nokey", {"spec.nodeName"}, &error));
}

}  // namespace
}  // namespace uvsched
