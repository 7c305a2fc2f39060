// A list of pods from its snapshot: sliced or whole, the same JSON; a slice
// parses a bounded number of pods; limit hands out a continue token that
// resumes after the last item; selectors filter; a bad query is refused with
// the API server's words.
#include "handlers/pods/pod_list.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "handlers/json_value.h"
#include "storage/base64.h"

namespace uvsched {
namespace {

RangeResult pods(int n) {
  RangeResult r;
  r.revision = 1000;
  for (int i = 0; i < n; ++i) {
    char name[16];
    snprintf(name, sizeof name, "p%04d", i);
    KeyValue kv;
    kv.key = std::string("/registry/pods/default/") + name;
    kv.value = std::string(R"({"metadata":{"name":")") + name + R"(","namespace":"default","labels":{"even":")" +
               (i % 2 == 0 ? "yes" : "no") + R"("}},"spec":{},"status":{"phase":"Pending"}})";
    kv.mod_revision = 10 + i;
    r.kvs.push_back(kv);
  }
  return r;
}

std::shared_ptr<const PodQuery> query(const std::string& q) {
  std::string error;
  auto parsed = PodQuery::parse(q, &error);
  EXPECT_TRUE(parsed.has_value()) << q << ": " << error;
  return std::make_shared<const PodQuery>(parsed.value_or(PodQuery{}));
}

std::vector<std::string> names(const std::string& list) {
  std::string error;
  auto v = JsonValue::parse(list, &error);
  EXPECT_TRUE(v.has_value()) << error << ": " << list.substr(0, 200);
  std::vector<std::string> out;
  if (!v) return out;
  for (const auto& item : v->get("items")->items()) out.push_back(item.find({"metadata", "name"})->text());
  return out;
}

std::string continue_of(const std::string& list) {
  std::string error;
  auto v = JsonValue::parse(list, &error);
  const JsonValue* c = v ? v->find({"metadata", "continue"}) : nullptr;
  return c ? c->text() : "";
}

TEST(PodListBodyTest, ASlicedListIsTheSameJsonAsAWholeOne) {
  PodListBody whole(pods(600), query("labelSelector=even%3Dyes"), 0);
  std::string all;
  EXPECT_FALSE(whole.slice(all, SIZE_MAX));
  PodListBody sliced(pods(600), query("labelSelector=even%3Dyes"), 0);
  std::string out;
  int slices = 0;
  for (bool more = true; more && slices < 10'000; ++slices) {
    std::string piece;  // each slice is written out before the next is made
    more = sliced.slice(piece, 4096);
    out += piece;
  }
  EXPECT_EQ(out, all);
  EXPECT_GE(slices, 3) << "600 pods to parse at most 256 a slice";
  EXPECT_EQ(names(all).size(), 300u);
  EXPECT_EQ(sliced.unread_bytes(), 0u);
}

TEST(PodListBodyTest, ALimitHandsOutATokenThatResumesAfterTheLastItem) {
  PodListBody first(pods(5), query("limit=2"), 0);
  std::string out;
  first.slice(out, SIZE_MAX);
  EXPECT_EQ(names(out), (std::vector<std::string>{"p0000", "p0001"}));
  std::string token = continue_of(out);
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(base64_decode(token).value_or(""), "/registry/pods/default/p0001");
  PodListBody rest(pods(5), query("limit=10&continue=" + token), 0);
  std::string more;
  rest.slice(more, SIZE_MAX);
  EXPECT_EQ(names(more), (std::vector<std::string>{"p0002", "p0003", "p0004"}));
  EXPECT_EQ(continue_of(more), "") << "nothing after the last";
}

TEST(PodListBodyTest, ALimitThatTakesTheLastMatchGivesNoToken) {
  PodListBody list(pods(4), query("limit=2&labelSelector=even%3Dyes"), 0);
  std::string out;
  list.slice(out, SIZE_MAX);
  EXPECT_EQ(names(out), (std::vector<std::string>{"p0000", "p0002"}));
  EXPECT_EQ(continue_of(out), "");
}

TEST(PodQueryTest, ABadQueryIsRefusedInTheApiServersWords) {
  struct Case {
    std::string query, starts;
  } cases[] = {
      {"labelSelector=a%3D%3D%3Db", "unable to parse requirement"},
      {"fieldSelector=spec.foo%3Dx", "field label not supported"},
      {"continue=%25%25%25", "invalid continue token"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(PodQuery::parse(c.query, &error).has_value()) << c.query;
    EXPECT_EQ(error.rfind(c.starts, 0), 0u) << c.query << ": " << error;
  }
}

}  // namespace
}  // namespace uvsched
