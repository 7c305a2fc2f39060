// Server-side apply's field ownership as the Kubernetes documentation tells
// it: what a config sets, FieldsV1 both ways, applies that add, take back
// and conflict, --force-conflicts, and updates that take the fields they change.
#include "handlers/pods/field_manager.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

constexpr char kNow[] = "2026-12-01T00:00:00Z";

std::string join(std::initializer_list<const char*> elements) {
  std::string out;
  for (const char* e : elements) {
    if (!out.empty()) out += FieldSet::kSep;
    out += e;
  }
  return out;
}

const char kWeb[] = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},
  "spec":{"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}]}]},
  "status":{"phase":"Running"}})";

TEST(FieldSetTest, APodSetsItsLeavesItsKeyedElementsAndNotItsIdentityOrStatus) {
  FieldSet s = FieldSet::of_pod(json(kWeb));
  EXPECT_TRUE(s.contains(join({"f:metadata", "f:labels", "f:app"})));
  EXPECT_TRUE(s.contains(join({"f:spec", "f:containers", R"(k:{"name":"c"})", "."})));
  EXPECT_TRUE(s.contains(join({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:image"})));
  EXPECT_TRUE(
      s.contains(join({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:ports", R"(k:{"containerPort":80})", "."})));
  for (const auto& p : s.paths()) {
    EXPECT_EQ(p.find("f:status"), std::string::npos) << p;
    EXPECT_NE(p, join({"f:metadata", "f:name"}));
    EXPECT_NE(p.substr(0, 6), "f:kind");
  }
}

TEST(FieldSetTest, FieldsV1RoundTripsAndRefusesWhatIsNotOne) {
  FieldSet s = FieldSet::of_pod(json(kWeb));
  JsonValue v1 = s.to_v1();
  EXPECT_NE(v1.dump().find(R"("k:{\"name\":\"c\"}":{".":{})"), std::string::npos) << v1.dump();
  auto back = FieldSet::from_v1(v1);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->paths(), s.paths());
  EXPECT_FALSE(FieldSet::from_v1(json(R"({"spec":{}})")));      // not an f:/k:/v: element
  EXPECT_FALSE(FieldSet::from_v1(json(R"({"f:spec":true})")));  // not an object
  EXPECT_FALSE(FieldSet::from_v1(json(R"({".":{}})")));         // the root is no element
}

TEST(FieldSetTest, PathsAreFoundAndPrintedAsTheApiServerPrintsThem) {
  JsonValue pod = json(kWeb);
  std::string image = join({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:image"});
  ASSERT_NE(value_at(pod, image), nullptr);
  EXPECT_EQ(value_at(pod, image)->text(), "nginx:1");
  EXPECT_EQ(value_at(pod, join({"f:spec", "f:containers", R"(k:{"name":"x"})", "f:image"})), nullptr);
  EXPECT_EQ(display_path(image), R"(.spec.containers[name="c"].image)");
  EXPECT_EQ(display_path(join({"f:metadata", "f:finalizers", R"(v:"a")"})), R"(.metadata.finalizers[="a"])");
}

TEST(ApplyTest, AFirstApplyMergesAndRecordsTheManager) {
  JsonValue live =
      json(R"({"metadata":{"name":"web"},"spec":{"restartPolicy":"Always","containers":[{"name":"c","image":"a"}]}})");
  ASSERT_TRUE(apply_config(live, json(kWeb), "kubectl", false, kNow).empty());
  EXPECT_EQ(live.find({"spec", "restartPolicy"})->text(), "Always");  // nobody's: kept
  EXPECT_EQ(live.find({"metadata", "labels", "app"})->text(), "web");
  auto entries = managed_entries(live);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].manager, "kubectl");
  EXPECT_EQ(entries[0].operation, "Apply");
  EXPECT_EQ(entries[0].time, kNow);
  EXPECT_EQ(live.find({"status"}), nullptr);  // an apply sets no status
}

TEST(ApplyTest, ApplyingTheSameTwiceChangesNothingAndAFieldDroppedIsTakenBack) {
  JsonValue live = json(R"({"metadata":{"name":"web"}})");
  ASSERT_TRUE(apply_config(live, json(kWeb), "kubectl", false, kNow).empty());
  JsonValue once = live;
  ASSERT_TRUE(apply_config(live, json(kWeb), "kubectl", false, kNow).empty());
  EXPECT_TRUE(live.same_as(once)) << live.dump();
  // The label is no longer in the config: it goes.
  JsonValue without = json(kWeb);
  without.get("metadata")->erase("labels");
  ASSERT_TRUE(apply_config(live, without, "kubectl", false, kNow).empty());
  EXPECT_EQ(live.find({"metadata", "labels", "app"}), nullptr) << live.dump();
}

TEST(ApplyTest, AnotherManagersFieldAtAnotherValueConflictsUnlessForced) {
  JsonValue live = json(R"({"metadata":{"name":"web"}})");
  ASSERT_TRUE(apply_config(live, json(kWeb), "kubectl", false, kNow).empty());
  JsonValue other = json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},
                             "spec":{"containers":[{"name":"c","image":"nginx:2"}]}})");
  JsonValue before = live;
  auto conflicts = apply_config(live, other, "ci", false, kNow);
  ASSERT_EQ(conflicts.size(), 1u);  // the label has the same value: shared, no conflict
  EXPECT_EQ(conflicts[0].manager, "kubectl");
  EXPECT_EQ(display_path(conflicts[0].path), R"(.spec.containers[name="c"].image)");
  EXPECT_EQ(apply_conflict_message(conflicts),
            R"(Apply failed with 1 conflict: conflict with "kubectl" using v1: .spec.containers[name="c"].image)");
  EXPECT_TRUE(live.same_as(before));
  // --force-conflicts: ci takes the image; kubectl keeps the rest.
  ASSERT_TRUE(apply_config(live, other, "ci", true, kNow).empty());
  EXPECT_EQ(live.find({"spec"})->get("containers")->items()[0].str("image"), "nginx:2");
  std::string image = join({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:image"});
  for (const auto& e : managed_entries(live)) {
    EXPECT_EQ(e.fields.contains(image), e.manager == "ci") << e.manager;
    EXPECT_TRUE(e.fields.contains(join({"f:metadata", "f:labels", "f:app"}))) << e.manager;
  }
  // kubectl applies its old config again: now it conflicts with ci.
  auto back = apply_config(live, json(kWeb), "kubectl", false, kNow);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].manager, "ci");
}

TEST(ApplyTest, AFieldAnotherManagerAlsoSetsStaysWhenOneStopsSettingIt) {
  JsonValue live = json(R"({"metadata":{"name":"web"}})");
  ASSERT_TRUE(apply_config(live, json(kWeb), "a", false, kNow).empty());
  ASSERT_TRUE(apply_config(live, json(kWeb), "b", false, kNow).empty());
  JsonValue without = json(kWeb);
  without.get("metadata")->erase("labels");
  ASSERT_TRUE(apply_config(live, without, "a", false, kNow).empty());
  EXPECT_EQ(live.find({"metadata", "labels", "app"})->text(), "web");  // b still sets it
}

TEST(ApplyTest, ManyConflictsAreGroupedByManager) {
  std::vector<ApplyConflict> c = {
      {"m", join({"f:spec", "f:a"})}, {"m", join({"f:spec", "f:b"})}, {"n", join({"f:spec", "f:c"})}};
  EXPECT_EQ(apply_conflict_message(c),
            "Apply failed with 3 conflicts: conflicts with \"m\" using v1:\n- .spec.a\n- .spec.b\n"
            "conflict with \"n\" using v1: .spec.c");
}

TEST(RecordUpdateTest, ACreateByANamedManagerOwnsWhatItSent) {
  JsonValue pod = json(kWeb);
  record_update(nullptr, pod, "kubectl-create", kNow);
  auto entries = managed_entries(pod);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].operation, "Update");
  EXPECT_EQ(entries[0].fields.paths(), FieldSet::of_pod(json(kWeb)).paths());
}

TEST(RecordUpdateTest, AnUpdateTakesTheFieldsItChangesAndNobodyKeepsWhatIsGone) {
  JsonValue live = json(R"({"metadata":{"name":"web"}})");
  ASSERT_TRUE(apply_config(live, json(kWeb), "kubectl", false, kNow).empty());
  JsonValue next = live;
  next.get("metadata")->get("labels")->set("app", JsonValue::string("edited"));
  next.get("spec")->get("containers")->items()[0].erase("ports");
  record_update(&live, next, "kubectl-edit", kNow);
  std::string label = join({"f:metadata", "f:labels", "f:app"});
  for (const auto& e : managed_entries(next)) {
    EXPECT_EQ(e.fields.contains(label), e.manager == "kubectl-edit") << e.manager;
    for (const auto& p : e.fields.paths()) EXPECT_EQ(p.find("f:ports"), std::string::npos) << e.manager << " " << p;
  }
  // An update that names no manager takes nothing, but still forgets what is gone.
  JsonValue plain = json(R"({"metadata":{"name":"web"}})");
  record_update(&next, plain, "", kNow);
  EXPECT_EQ(plain.find({"metadata", "managedFields"}), nullptr) << plain.dump();
}

}  // namespace
}  // namespace uvsched
