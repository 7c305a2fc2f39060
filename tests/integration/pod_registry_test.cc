// The pod registry as clients see it: raw HTTP for the error contract, then
// the real kubectl and the official Python client against the real daemon.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include "tests/support/daemon_process.h"
#include "tests/support/etcd_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

const std::string kPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"demo"}},)"
    R"("spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"500m","memory":"128Mi"}}}]}})";

std::string pod_named(const std::string& name, const std::string& app) {
  return R"({"metadata":{"name":")" + name + R"(","labels":{"app":")" + app +
         R"("}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
}

// How many pods a list body holds.
size_t count_pods(const std::string& items) {
  size_t n = 0;
  for (size_t at = items.find("\"kind\":\"Pod\""); at != std::string::npos; at = items.find("\"kind\":\"Pod\"", at + 1))
    ++n;
  return n;
}

// Runs a shell command, returns its exit code and output.
class PodRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<DaemonProcess>();
    ASSERT_TRUE(daemon_->start()) << daemon_->log();
    base_ = "http://127.0.0.1:" + std::to_string(daemon_->port());
  }
  void TearDown() override {
    if (daemon_->running()) {
      EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
    }
  }
  std::optional<RawResponse> req(std::string_view method, const std::string& path, const std::string& body = {},
                                 const std::string& headers = {}) {
    return http_request(daemon_->port(), method, path, body, headers);
  }
  // The pod once the scheduler has said why it is pending (it writes the
  // PodScheduled condition once, which moves the resourceVersion).
  std::string settled(const std::string& name) {
    auto until = std::chrono::steady_clock::now() + 10s;
    std::string body;
    while (std::chrono::steady_clock::now() < until) {
      body = answered(req("GET", "/api/v1/namespaces/default/pods/" + name)).body;
      if (body.find("\"PodScheduled\"") != std::string::npos) break;
      std::this_thread::sleep_for(10ms);
    }
    return body;
  }
  std::string kubectl(const std::string& args, int* code = nullptr) {
    std::string out;
    // Its own discovery cache: kubectl keys it by host:port, and ports get reused.
    int rc = run_shell("kubectl --cache-dir " + kube_cache_.path() + " --server " + base_ + " " + args, &out);
    if (code) *code = rc;
    return out;
  }
  static std::string field(const std::string& json, std::initializer_list<const char*> path) {
    simdjson::dom::parser p;
    simdjson::dom::element e;
    if (p.parse(json).get(e)) return "<unparsable>";
    for (const char* k : path) {  // a member's name, or an item's index in an array
      simdjson::dom::array items;
      if (e.get_array().get(items) == simdjson::SUCCESS) {
        if (items.at(std::strtoul(k, nullptr, 10)).get(e)) return "<missing>";
      } else if (e[k].get(e)) {
        return "<missing>";
      }
    }
    if (e.is_string()) return std::string(std::string_view(e));
    return simdjson::minify(e);
  }

  std::unique_ptr<DaemonProcess> daemon_;
  std::string base_;
  TempDir kube_cache_;
};

TEST_F(PodRegistryTest, CreateFillsDefaultsAndGetReturnsIt) {
  auto c = req("POST", "/api/v1/namespaces/default/pods", kPod);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 201) << c->body;
  EXPECT_EQ(field(c->body, {"metadata", "namespace"}), "default");
  EXPECT_EQ(field(c->body, {"status", "phase"}), "Pending");
  EXPECT_EQ(field(c->body, {"spec", "restartPolicy"}), "Always");
  EXPECT_EQ(field(c->body, {"metadata", "uid"}).size(), 36u);
  EXPECT_NE(field(c->body, {"metadata", "creationTimestamp"}), "<missing>");
  std::string rv = field(c->body, {"metadata", "resourceVersion"});
  auto g = req("GET", "/api/v1/namespaces/default/pods/web");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->status, 200);
  EXPECT_EQ(field(g->body, {"metadata", "uid"}), field(c->body, {"metadata", "uid"}));
  EXPECT_GE(std::stoll(field(g->body, {"metadata", "resourceVersion"})), std::stoll(rv));
  // With no agent offering anything, the scheduler says why the pod waits.
  std::string waiting = settled("web");
  EXPECT_NE(
      waiting.find(
          R"("type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/0 nodes are available: no agent has subscribed. pod requests cpu 0.5, memory 128Mi; there are no free offers. Queue position 1 of 1 waiting when this was written (GET /v1/queue has the order now).")"),
      std::string::npos)
      << waiting;
  EXPECT_EQ(field(g->body, {"spec", "containers"}),
            R"([{"name":"c","image":"nginx","resources":{"requests":{"cpu":"500m","memory":"128Mi"}}}])");
}

TEST_F(PodRegistryTest, ErrorsAreStatusObjects) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  struct Case {
    std::string method, path, body, content_type;
    int code;
    std::string reason;
  } cases[] = {
      {"POST", "/api/v1/namespaces/default/pods", kPod, "", 409, "AlreadyExists"},
      {"GET", "/api/v1/namespaces/default/pods/nope", "", "", 404, "NotFound"},
      {"DELETE", "/api/v1/namespaces/default/pods/nope", "", "", 404, "NotFound"},
      {"POST", "/api/v1/namespaces/nowhere/pods", pod_named("a", "x"), "", 404, "NotFound"},
      {"POST", "/api/v1/namespaces/default/pods", "{not json", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"i"}]}})", "", 422, "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods", R"({"metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}})",
       "", 422, "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"lots"}}}]}})",
       "", 422, "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"x","namespace":"other"},"spec":{"containers":[{"name":"c","image":"i"}]}})", "", 400,
       "BadRequest"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{}})", "application/apply-patch+cbor", 415,
       "UnsupportedMediaType"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"({"op":"add"})", "application/json-patch+json", 400,
       "BadRequest"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"([{"op":"add"}])", "application/json-patch+json", 422,
       "Invalid"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"([{"op":"remove","path":"/metadata/nope"}])",
       "application/json-patch+json", 422, "Invalid"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"([{"op":"test","path":"/metadata/name","value":"other"}])",
       "application/json-patch+json", 422, "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"x","labels":{"a b":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}})", "", 422,
       "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"x","labels":{"a":"-c"}},"spec":{"containers":[{"name":"c","image":"i"}]}})", "", 422,
       "Invalid"},
      {"POST", "/api/v1/namespaces/default/pods",
       R"({"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i"}],"nodeSelector":{"z/y/x":"a"}}})", "",
       422, "Invalid"},
      {"PATCH", "/api/v1/namespaces/default/pods/web",
       R"({"metadata":{"annotations":{"a":")" + std::string(300'000, 'x') + R"("}}})", "application/merge-patch+json",
       422, "Invalid"},
      {"PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{"labels":{"example.com/":"a"}}})",
       "application/strategic-merge-patch+json", 422, "Invalid"},
      {"POST", "/api/v1/namespaces", R"({"metadata":{"name":"ns-x","labels":{"a b":"c"}}})", "", 422, "Invalid"},
      {"GET", "/api/v1/namespaces/default/pods?labelSelector=app%20in%20oops", "", "", 400, "BadRequest"},
      {"GET", "/api/v1/pods?fieldSelector=spec.unknown%3Dx", "", "", 400, "BadRequest"},
      {"GET", "/api/v1/pods?limit=abc", "", "", 400, "BadRequest"},
      {"GET", "/api/v1/namespaces?timeoutSeconds=5s", "", "", 400, "BadRequest"},
      {"GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=1.5", "", "", 400, "BadRequest"},
      {"GET", "/api/v1/pods?resourceVersion=abc", "", "", 400, "BadRequest"},
      {"GET", "/api/v1/events?resourceVersionMatch=Exact", "", "", 422, "Invalid"},
      {"GET", "/apis/scheduling.k8s.io/v1/priorityclasses?resourceVersion=3&resourceVersionMatch=Newest", "", "", 422,
       "Invalid"},
      // A watch-list client (client-go's WatchListClient) is told, and falls back to list and watch.
      {"GET", "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "", "", 422, "Invalid"},
      {"GET", "/api/v1/widgets", "", "", 404, "NotFound"},
      {"DELETE", "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=soon", "", "", 400, "BadRequest"},
      {"DELETE", "/api/v1/namespaces/default/pods/web", R"({"gracePeriodSeconds":"30"})", "", 400, "BadRequest"},
      {"DELETE", "/api/v1/namespaces/default/pods?gracePeriodSeconds=1.5", "", "", 400, "BadRequest"},
      // Evictions the API server refuses (and the pod stays).
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"metadata":{"name":"other"}})", "", 400,
       "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"metadata":{}})", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"kind":"Pod","metadata":{"name":"web"}})", "", 400,
       "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction",
       R"({"apiVersion":"policy/v2","kind":"Eviction","metadata":{"name":"web"}})", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"metadata":{"name":"web","namespace":"other"}})", "",
       400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction",
       R"({"metadata":{"name":"web"},"deleteOptions":{"dryRun":["Some"]}})", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"metadata":{"name":"web"},"deleteOptions":7})", "",
       400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction", "[1]", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/web/eviction",
       R"({"metadata":{"name":"web"},"deleteOptions":{"gracePeriodSeconds":true}})", "", 400, "BadRequest"},
      {"POST", "/api/v1/namespaces/default/pods/nope/eviction", R"({"metadata":{"name":"nope"}})", "", 404, "NotFound"},
  };
  for (const auto& c : cases) {
    std::string headers = c.content_type.empty() ? "" : "Content-Type: " + c.content_type + "\r\n";
    auto r = req(c.method, c.path, c.body, headers);
    ASSERT_TRUE(r) << c.path;
    EXPECT_EQ(r->status, c.code) << c.method << " " << c.path << " " << r->body;
    EXPECT_EQ(field(r->body, {"kind"}), "Status") << r->body;
    EXPECT_EQ(field(r->body, {"reason"}), c.reason) << r->body;
    EXPECT_EQ(field(r->body, {"code"}), std::to_string(c.code));
  }
  auto invalid = req("POST", "/api/v1/namespaces/default/pods",
                     R"({"metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(field(invalid->body, {"details", "causes"}),
            R"([{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"}])");
  auto bad_label =
      req("POST", "/api/v1/namespaces/default/pods",
          R"({"metadata":{"name":"x","labels":{"a b":"c"}},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_EQ(field(bad_label->body, {"details", "kind"}), "Pod");
  EXPECT_EQ(field(bad_label->body, {"message"}).substr(0, 82),
            R"(Pod "x" is invalid: metadata.labels: Invalid value: "a b": name part must consist )")
      << bad_label->body;
  // A name is a DNS subdomain: 253 characters, none of them a dot, may be.
  const std::string long_name(253, 'n');
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", pod_named(long_name, "app"))).status, 201);
  // Nothing that failed was stored.
  auto list = req("GET", "/api/v1/pods");
  ASSERT_TRUE(list && list->status == 200);
  EXPECT_EQ(field(list->body, {"items"}).find("\"name\":\"x\""), std::string::npos) << list->body;
  EXPECT_EQ(answered(req("GET", "/api/v1/namespaces/ns-x")).status, 404);
  auto web = req("GET", "/api/v1/namespaces/default/pods/web");
  EXPECT_EQ(field(web->body, {"metadata", "annotations"}), "<missing>") << web->body.substr(0, 300);
}

// Bodies are decoded into the described types first, as the API server's
// decoder does: a wrong JSON type is 400 naming every such field, and the
// pod is not stored; unknown fields follow fieldValidation.
TEST_F(PodRegistryTest, WrongTypesAreRefusedAndUnknownFieldsFollowFieldValidation) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  for (const char* spec : {R"("nodeName":{})", R"("nodeName":true)", R"("nodeSelector":{"a":[]})"}) {
    auto r = req("POST", pods,
                 std::string(R"({"metadata":{"name":"typed"},"spec":{)") + spec +
                     R"(,"containers":[{"name":"c","image":"i"}]}})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << spec << ": " << r->body;
    EXPECT_EQ(field(r->body, {"reason"}), "BadRequest");
    EXPECT_NE(r->body.find("cannot unmarshal"), std::string::npos) << r->body;
  }
  for (const char* ns : {"[]", "1", "{}"}) {
    auto r = req("POST", pods,
                 std::string(R"({"metadata":{"name":"typed","namespace":)") + ns +
                     R"(},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    EXPECT_EQ(r->status, 400) << ns << ": " << r->body;
    EXPECT_NE(r->body.find("ObjectMeta.metadata.namespace of type string"), std::string::npos) << r->body;
  }
  auto every = req(
      "POST", pods,
      R"({"metadata":{"name":"typed"},"spec":{"nodeName":1,"priority":"x","containers":[{"name":"c","image":5}]}})");
  EXPECT_EQ(every->status, 400);
  for (const char* f : {"spec.nodeName", "spec.priority", "spec.containers[0].image"}) {
    EXPECT_NE(every->body.find(std::string("\"field\":\"") + f + "\""), std::string::npos) << f << ": " << every->body;
  }
  EXPECT_EQ(answered(req("GET", pods + "/typed")).status, 404);  // none of them was stored

  // Unknown fields: Warn (the default) drops them and says so.
  const std::string extra =
      R"({"metadata":{"name":"extra"},"spec":{"bogus":1,"containers":[{"name":"c","image":"i","bogus2":2}]}})";
  auto warned = req("POST", pods, extra);
  ASSERT_EQ(warned->status, 201) << warned->body;
  EXPECT_NE(warned->header("Warning").find("unknown field \\\"spec.bogus\\\""), std::string::npos)
      << warned->header("Warning");
  auto stored = req("GET", pods + "/extra");
  ASSERT_TRUE(stored && stored->status == 200);
  EXPECT_EQ(stored->body.find("bogus"), std::string::npos) << stored->body;
  auto strict = req("POST", pods + "?fieldValidation=Strict",
                    R"({"metadata":{"name":"strict"},"spec":{"bogus":1,"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_EQ(strict->status, 400);
  EXPECT_EQ(field(strict->body, {"message"}), "strict decoding error: unknown field \"spec.bogus\"");
  auto ignored = req("POST", pods + "?fieldValidation=Ignore",
                     R"({"metadata":{"name":"ignored"},"spec":{"bogus":1,"containers":[{"name":"c","image":"i"}]}})");
  EXPECT_EQ(ignored->status, 201);
  EXPECT_EQ(ignored->header("Warning"), "");
  EXPECT_EQ(answered(req("POST", pods + "?fieldValidation=Loose", extra)).status, 400);
  // A patch cannot give a field a wrong type either.
  auto patched =
      req("PATCH", pods + "/extra", R"({"spec":{"nodeName":{}}})", "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patched->status, 400) << patched->body;
  // And a field a patch adds that the type lacks is dropped with a Warning (Warn), or refused (Strict).
  auto patch_warned = req("PATCH", pods + "/extra", R"({"metadata":{"labels":{"a":"b"}},"spec":{"bogus3":1}})",
                          "Content-Type: application/merge-patch+json\r\n");
  ASSERT_EQ(patch_warned->status, 200) << patch_warned->body;
  EXPECT_NE(patch_warned->header("Warning").find("unknown field \\\"spec.bogus3\\\""), std::string::npos)
      << patch_warned->header("Warning");
  EXPECT_EQ(patch_warned->body.find("bogus3"), std::string::npos) << patch_warned->body;
  EXPECT_NE(patch_warned->body.find(R"("a":"b")"), std::string::npos) << patch_warned->body;
  auto patch_strict = req("PATCH", pods + "/extra?fieldValidation=Strict", R"({"spec":{"bogus3":1}})",
                          "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patch_strict->status, 400) << patch_strict->body;
  // A body in a media type uvsched does not decode: 415, with what it takes.
  auto yaml = req("POST", pods, "metadata: {name: y}", "Content-Type: application/yaml\r\n");
  EXPECT_EQ(yaml->status, 415);
  EXPECT_NE(yaml->body.find("accepted media types include: application/json"), std::string::npos) << yaml->body;
}

// The registry's kinds are decoded as the API server decodes them too: a
// built-in kind's wrong JSON type is the typed decoder's 400, a custom
// resource's (PodGroup) its schema's 422; unknown fields follow
// fieldValidation, in creates, replaces and patches; nothing refused is stored.
TEST_F(PodRegistryTest, TheRegistrysKindsAreDecodedAsTheApiServerDecodesThem) {
  const std::string budgets = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
  const std::string classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
  const std::string groups = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";
  struct Case {
    std::string path, body;
    int code;
    std::string field;
  };
  const Case refused[] = {
      {budgets, R"({"metadata":{"name":"b"},"spec":{"minAvailable":true}})", 400, "spec.minAvailable"},
      {budgets, R"({"metadata":{"name":"b"},"spec":{"selector":{"matchLabels":[]}}})", 400,
       "spec.selector.matchLabels"},
      {budgets, R"({"metadata":{"name":"b"},"spec":{"minAvailable":1},"status":{"disruptionsAllowed":"9"}})", 400,
       "status.disruptionsAllowed"},
      {classes, R"({"metadata":{"name":"c"},"value":"10"})", 400, "value"},
      {classes, R"({"metadata":{"name":"c"},"value":10,"globalDefault":"yes"})", 400, "globalDefault"},
      {groups, R"({"metadata":{"name":"g"},"spec":{"minMember":"3"}})", 422, "spec.minMember"},
      {groups, R"({"metadata":{"name":"g"},"spec":{"minMember":2,"minResources":[]}})", 422, "spec.minResources"},
  };
  for (const Case& c : refused) {
    auto r = req("POST", c.path, c.body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.code) << c.body << ": " << r->body;
    EXPECT_EQ(field(r->body, {"reason"}), c.code == 400 ? "BadRequest" : "Invalid") << r->body;
    EXPECT_NE(r->body.find("\"field\":\"" + c.field + "\""), std::string::npos) << r->body;
  }
  EXPECT_NE(answered(req("POST", groups, refused[5].body)).body.find("spec.minMember in body must be of type integer"),
            std::string::npos);
  for (const auto& path : {budgets + "/b", classes + "/c", groups + "/g"})
    EXPECT_EQ(answered(req("GET", path)).status, 404) << path << ": nothing refused is stored";

  // Unknown fields: dropped with a Warning (Warn, the default), refused (Strict).
  auto warned = req("POST", budgets, R"({"metadata":{"name":"b"},"spec":{"minAvailable":1,"bogus":2}})");
  ASSERT_EQ(warned->status, 201) << warned->body;
  EXPECT_NE(warned->header("Warning").find("unknown field \\\"spec.bogus\\\""), std::string::npos)
      << warned->header("Warning");
  EXPECT_EQ(answered(req("GET", budgets + "/b")).body.find("bogus"), std::string::npos);
  auto strict = req("POST", classes + "?fieldValidation=Strict", R"({"metadata":{"name":"c"},"value":10,"extra":1})");
  EXPECT_EQ(strict->status, 400) << strict->body;
  EXPECT_EQ(field(strict->body, {"message"}), "strict decoding error: unknown field \"extra\"");
  ASSERT_EQ(answered(req("POST", groups, R"({"metadata":{"name":"g"},"spec":{"minMember":2}})")).status, 201);
  // A replace is decoded as a create is.
  std::string group = answered(req("GET", groups + "/g")).body;
  std::string replaced = group;
  replaced.replace(replaced.find(R"("minMember":2)"), 13, R"("minMember":3,"later":1)");
  auto put = req("PUT", groups + "/g", replaced);
  ASSERT_EQ(put->status, 200) << put->body;
  EXPECT_NE(put->header("Warning").find("unknown field \\\"spec.later\\\""), std::string::npos);
  EXPECT_EQ(put->body.find("later"), std::string::npos) << put->body;
  // A patch cannot give a field a wrong type; what it adds that the type lacks is dropped, or refused (Strict).
  auto patched = req("PATCH", budgets + "/b", R"({"spec":{"minAvailable":[1]}})",
                     "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patched->status, 400) << patched->body;
  auto patched_group =
      req("PATCH", groups + "/g", R"({"spec":{"minMember":"4"}})", "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patched_group->status, 422) << patched_group->body;
  auto patch_warned =
      req("PATCH", classes + "/c", R"({"value":11,"bogus":1})", "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patch_warned->status, 404) << "c was refused above";
  ASSERT_EQ(answered(req("POST", classes, R"({"metadata":{"name":"c"},"value":10})")).status, 201);
  patch_warned = req("PATCH", classes + "/c", R"({"description":"d","bogus":1})",
                     "Content-Type: application/merge-patch+json\r\n");
  ASSERT_EQ(patch_warned->status, 200) << patch_warned->body;
  EXPECT_NE(patch_warned->header("Warning").find("unknown field \\\"bogus\\\""), std::string::npos);
  EXPECT_EQ(patch_warned->body.find("bogus"), std::string::npos) << patch_warned->body;
  auto patch_strict = req("PATCH", budgets + "/b?fieldValidation=Strict", R"({"spec":{"bogus":1}})",
                          "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(patch_strict->status, 400) << patch_strict->body;
  EXPECT_EQ(field(answered(req("GET", budgets + "/b")).body, {"spec"}), R"({"minAvailable":1})");
  EXPECT_EQ(field(answered(req("GET", groups + "/g")).body, {"spec"}), R"({"minMember":3})");
}

// `kubectl create namespace` (a typed client: protobuf with 1.32, JSON with
// 1.20), then a pod in it.
TEST_F(PodRegistryTest, KubectlCreatesANamespaceAndAPodInIt) {
  int code = 0;
  std::string out = kubectl("create namespace team-a", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("namespace/team-a created"), std::string::npos) << out;
  out = kubectl("get namespace team-a -o jsonpath={.status.phase}", &code);
  EXPECT_EQ(out, "Active");
  out = kubectl("run web --image=nginx --restart=Never -n team-a", &code);
  EXPECT_EQ(code, 0) << out;
  out = kubectl("get pods -n team-a -o name", &code);
  EXPECT_NE(out.find("pod/web"), std::string::npos) << out;
  out = kubectl("create namespace team-a", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("already exists"), std::string::npos) << out;
}

// kubectl's --dry-run=server: create, label, apply and delete answer as they
// would, and nothing changes; writes uvsched does not dry-run are refused,
// never done.
TEST_F(PodRegistryTest, KubectlServerDryRunChangesNothing) {
  std::string manifest = daemon_->data_dir() + "/dry.yaml";
  std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dry\nspec:\n  containers:\n"
                          << "  - name: c\n    image: nginx\n";
  int code = 0;
  std::string out = kubectl("create --dry-run=server -f " + manifest + " -o yaml", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("uvsched.io/dry-run-placement: 'pending: 0/0 nodes are available"), std::string::npos) << out;
  EXPECT_NE(out.find("uid: "), std::string::npos) << out;
  auto r = req("GET", "/api/v1/namespaces/default/pods/dry");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << "nothing stored";
  out = kubectl("create -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  std::string rv =
      field(answered(req("GET", "/api/v1/namespaces/default/pods/dry")).body, {"metadata", "resourceVersion"});
  out = kubectl("label pod dry team=a --dry-run=server -o jsonpath={.metadata.labels.team}", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(out, "a");
  out = kubectl("delete pod dry --dry-run=server", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("(server dry run)"), std::string::npos) << out;
  std::string after = answered(req("GET", "/api/v1/namespaces/default/pods/dry")).body;
  EXPECT_EQ(field(after, {"metadata", "resourceVersion"}), rv) << "unchanged: " << after;
  EXPECT_EQ(field(after, {"metadata", "labels"}), "<missing>") << after;
  out = kubectl("create namespace dry-ns --dry-run=server", &code);
  EXPECT_NE(code, 0) << out;
  // 1.32 sends it and the server refuses; 1.20 reads in the OpenAPI that Namespace takes no dryRun.
  EXPECT_TRUE(out.find("dryRun is not supported") != std::string::npos ||
              out.find("Namespace doesn't support dry-run") != std::string::npos)
      << out;
  out = kubectl("get namespace dry-ns", &code);
  EXPECT_NE(code, 0) << "refused, not created: " << out;
}

// kubectl explain reads the same description the decoder checks against.
TEST_F(PodRegistryTest, KubectlExplainReachesTheLeaves) {
  int code = 0;
  std::string out = kubectl("explain pod.spec.nodeName", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("nodeName <string>"), std::string::npos) << out;
  out = kubectl("explain pod.spec.containers.ports.hostPort", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("<integer>"), std::string::npos) << out;
  out = kubectl("explain pod.spec.containers.resources.requests", &code);
  EXPECT_EQ(code, 0) << out;
  // And the registry's kinds, from their group-versions' documents (v3 with
  // kubectl 1.32, v2 with 1.20).
  out = kubectl("explain pdb.spec", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("minAvailable"), std::string::npos) << out;
  EXPECT_NE(out.find("unhealthyPodEvictionPolicy\t<string>"), std::string::npos) << out;
  out = kubectl("explain pdb.spec.selector.matchExpressions.operator", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("In, NotIn, Exists or DoesNotExist"), std::string::npos) << out;
  out = kubectl("explain priorityclass.value", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("value <integer>"), std::string::npos) << out;
  out = kubectl("explain podgroup.spec.minMember", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("minMember <integer>"), std::string::npos) << out;
  out = kubectl("explain pg.status", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("scheduled\t<integer>"), std::string::npos) << out;
}

// A read from a resourceVersion the store has not reached (the store was
// replaced under a client that kept it) is the API server's 504 with the
// ResourceVersionTooLarge cause, on which client-go lists again; not older
// data for a list, nor, for a watch, a silent wait that skips every change
// until the store gets there. Reads from the current revision or older go on.
TEST_F(PodRegistryTest, AReadFromAResourceVersionTheStoreHasNotReachedIsTooLarge) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  std::string rv = field(answered(req("GET", "/api/v1/pods")).body, {"metadata", "resourceVersion"});
  const std::string ahead = std::to_string(std::stoll(rv) + 1000);
  for (const std::string path :
       {"/api/v1/pods", "/api/v1/namespaces/default/pods", "/api/v1/pods?watch=1", "/api/v1/namespaces?watch=true",
        "/api/v1/namespaces/default/pods/web", "/api/v1/events?watch=1",
        "/apis/scheduling.k8s.io/v1/priorityclasses?watch=1", "/apis/policy/v1/poddisruptionbudgets"}) {
    std::string url = path + (path.find('?') == std::string::npos ? "?" : "&") + "resourceVersion=" + ahead;
    auto r = req("GET", url);
    ASSERT_TRUE(r) << url;
    EXPECT_EQ(r->status, 504) << url << ": " << r->body;
    EXPECT_EQ(field(r->body, {"reason"}), "Timeout") << r->body;
    EXPECT_EQ(field(r->body, {"details", "causes", "0", "reason"}), "ResourceVersionTooLarge") << r->body;
    EXPECT_EQ(field(r->body, {"message"}).rfind("Timeout: Too large resource version: " + ahead + ", current: ", 0), 0u)
        << r->body;
  }
  auto current = req("GET", "/api/v1/pods?resourceVersion=" + rv);
  ASSERT_TRUE(current);
  EXPECT_EQ(current->status, 200) << current->body;
  EXPECT_EQ(answered(req("GET", "/api/v1/pods?resourceVersion=1")).status, 200);
  EXPECT_EQ(answered(req("GET", "/api/v1/pods?resourceVersion=0")).status, 200);
  EXPECT_EQ(answered(req("GET", "/api/v1/pods?resourceVersion=x")).status, 400) << "still the handler's to refuse";
}

// kubectl cluster-info, a newcomer's first command, lists the kube-system
// services to say where the control plane is: uvsched runs none, and says
// so when asked to make one.
TEST_F(PodRegistryTest, KubectlClusterInfoSaysWhereTheControlPlaneIs) {
  int code = 0;
  std::string out = kubectl("cluster-info", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("is running at"), std::string::npos) << out;
  EXPECT_NE(out.find(base_), std::string::npos) << out;
  out = kubectl("get services -A", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("No resources found"), std::string::npos) << out;
  out = kubectl("create service clusterip web --tcp=80:80", &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("uvsched runs no services"), std::string::npos) << out;
  EXPECT_EQ(answered(req("GET", "/api/v1/namespaces/default/services/web")).status, 404);
}

// The built-in PriorityClasses are the API server's system classes: their
// description may change, their value, globalDefault and preemptionPolicy
// may not, nor may they be deleted; a "system-" name is theirs alone.
TEST_F(PodRegistryTest, TheSystemPriorityClassesAreKeptAsTheApiServerKeepsThem) {
  const std::string classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
  const std::string merge = "Content-Type: application/merge-patch+json\r\n";
  auto described = req("PATCH", classes + "/system-node-critical", R"({"description":"agents' own daemons"})", merge);
  ASSERT_TRUE(described);
  EXPECT_EQ(described->status, 200) << described->body;
  EXPECT_EQ(field(answered(req("GET", classes + "/system-node-critical")).body, {"description"}),
            "agents' own daemons");
  struct Case {
    std::string method, path, body;
    int code;
    std::string says;
  } cases[] = {
      {"PATCH", "/system-node-critical", R"({"value":5})", 422, "may not be changed in an update"},
      {"PATCH", "/system-node-critical", R"({"globalDefault":true})", 422,
       "reserved for system use only. error: globalDefault of system-node-critical PriorityClass must be false"},
      {"PATCH", "/system-node-critical", R"({"preemptionPolicy":"Never"})", 422, "field is immutable"},
      {"DELETE", "/system-cluster-critical", "", 403,
       R"(priorityclasses.scheduling.k8s.io \"system-cluster-critical\" is forbidden: this is a system priority )"
       R"(class and cannot be deleted)"},
      {"POST", "", R"({"metadata":{"name":"system-mine"},"value":5})", 422,
       "error: name system-mine is not a known system priority class"},
      {"POST", "", R"({"metadata":{"name":"mine"},"value":2000000000})", 422, "must be from"},
  };
  for (const Case& c : cases) {
    auto r = req(c.method, classes + c.path, c.body, c.method == "PATCH" ? merge : "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.code) << c.method << " " << c.path << " " << c.body << ": " << r->body;
    EXPECT_NE(r->body.find(c.says), std::string::npos) << r->body;
  }
  EXPECT_EQ(field(answered(req("GET", classes + "/system-node-critical")).body, {"value"}), "2000001000");
  EXPECT_EQ(answered(req("GET", classes + "/system-cluster-critical")).status, 200);
}

TEST_F(PodRegistryTest, StaleResourceVersionsConflict) {
  auto c = req("POST", "/api/v1/namespaces/default/pods", kPod);
  std::string rv = field(settled("web"), {"metadata", "resourceVersion"});
  std::string updated = R"({"metadata":{"name":"web","resourceVersion":")" + rv +
                        R"(","labels":{"app":"v2"}},"spec":{"containers":[{"name":"c","image":"nginx:2",)"
                        R"("resources":{"requests":{"cpu":"500m","memory":"128Mi"}}}]}})";
  auto put = req("PUT", "/api/v1/namespaces/default/pods/web", updated);
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200) << put->body;
  EXPECT_NE(field(put->body, {"metadata", "resourceVersion"}), rv);
  EXPECT_EQ(field(put->body, {"metadata", "uid"}), field(c->body, {"metadata", "uid"}));  // the server's fields stay
  auto stale = req("PUT", "/api/v1/namespaces/default/pods/web", updated);
  EXPECT_EQ(stale->status, 409);
  EXPECT_EQ(field(stale->body, {"reason"}), "Conflict");
  auto stale_patch =
      req("PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{"resourceVersion":")" + rv + R"("}})",
          "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(stale_patch->status, 409);
}

TEST_F(PodRegistryTest, ListsFilterByLabelsAndFieldsAndPage) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods",
                           pod_named("p" + std::to_string(i), i % 2 ? "odd" : "even")))
                  .status,
              201);
  }
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})")).status, 201);
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/team/pods", pod_named("t0", "odd"))).status, 201);
  auto count = [&](const std::string& path) { return count_pods(field(answered(req("GET", path)).body, {"items"})); };
  EXPECT_EQ(count("/api/v1/namespaces/default/pods"), 5u);
  EXPECT_EQ(count("/api/v1/pods"), 6u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=app%3Dodd"), 3u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=app!%3Dodd"), 3u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=app%20in%20(odd,even)"), 6u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=app%20notin%20(odd)"), 3u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=app"), 6u);
  EXPECT_EQ(count("/api/v1/pods?labelSelector=!app"), 0u);
  EXPECT_EQ(count("/api/v1/pods?fieldSelector=metadata.name%3Dp3"), 1u);
  EXPECT_EQ(count("/api/v1/pods?fieldSelector=metadata.namespace%3Dteam"), 1u);
  EXPECT_EQ(count("/api/v1/pods?fieldSelector=status.phase%3DPending"), 6u);
  EXPECT_EQ(count("/api/v1/pods?fieldSelector=spec.nodeName%3D"), 6u);

  // Pages of two, following continue tokens, see every pod exactly once.
  std::string cont;
  size_t seen = 0, pages = 0;
  do {
    auto r = req("GET", "/api/v1/pods?limit=2" + (cont.empty() ? "" : "&continue=" + cont));
    std::string c = field(r->body, {"metadata", "continue"});
    cont = c == "<missing>" ? "" : c;
    seen += count_pods(field(r->body, {"items"}));
    ++pages;
  } while (!cont.empty() && pages < 10);
  EXPECT_EQ(seen, 6u);
  EXPECT_EQ(pages, 3u);
  // As kubectl asks: Tables, at most --chunk-size rows each (500 unless told),
  // following each page's continue token; a Table without one ended the list
  // at its first page.
  std::string chunked = kubectl("get pods -A --chunk-size=2 --no-headers");
  EXPECT_EQ(std::count(chunked.begin(), chunked.end(), '\n'), 6) << chunked;
  // Sorting by a field outside metadata, kubectl asks for the whole object in
  // each row (includeObject=Object); with only the metadata it found no such
  // field and printed "No resources found".
  std::string sorted = kubectl("get pods -A --sort-by=.spec.containers[0].image --no-headers");
  EXPECT_EQ(std::count(sorted.begin(), sorted.end(), '\n'), 6) << sorted;
  const std::string table = "Accept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n";
  auto whole = answered(req("GET", "/api/v1/namespaces/team/pods?includeObject=Object", "", table));
  EXPECT_EQ(field(whole.body, {"rows", "0", "object", "kind"}), "Pod") << whole.body;
  EXPECT_EQ(field(whole.body, {"rows", "0", "object", "spec", "containers", "0", "name"}), "c") << whole.body;
  auto bare = answered(req("GET", "/api/v1/namespaces/team/pods?includeObject=None", "", table));
  EXPECT_EQ(field(bare.body, {"rows", "0", "object"}), "<missing>") << bare.body;
  auto bad = answered(req("GET", "/api/v1/pods?includeObject=All", "", table));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find(R"(includeObject: Unsupported value: \"All\")"), std::string::npos) << bad.body;

  // Deleting a namespace deletes its pods.
  EXPECT_EQ(answered(req("DELETE", "/api/v1/namespaces/team")).status, 200);
  EXPECT_EQ(count("/api/v1/pods"), 5u);
  EXPECT_EQ(answered(req("GET", "/api/v1/namespaces/team")).status, 404);
}

TEST_F(PodRegistryTest, WatchStreamsChangesFromAResourceVersion) {
  auto c = req("POST", "/api/v1/namespaces/default/pods", kPod);
  std::string rv = field(c->body, {"metadata", "resourceVersion"});
  RawConnection w;
  ASSERT_TRUE(w.connect(daemon_->port()));
  ASSERT_TRUE(
      // `?watch` with no value, as curl users write it: the API server reads it as true.
      w.send("GET /api/v1/namespaces/default/pods?watch&resourceVersion=" + rv + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(req("PATCH", "/api/v1/namespaces/default/pods/web", R"({"metadata":{"labels":{"x":"y"}}})",
                  "Content-Type: application/strategic-merge-patch+json\r\n"));
  ASSERT_TRUE(req("POST", "/api/v1/namespaces/default/pods", pod_named("second", "demo")));
  ASSERT_TRUE(req("DELETE", "/api/v1/namespaces/default/pods/web"));
  auto got = w.read_until("\"type\":\"DELETED\"");
  ASSERT_TRUE(got);
  size_t mod = got->find("\"type\":\"MODIFIED\""), add = got->find("\"type\":\"ADDED\""),
         del = got->find("\"type\":\"DELETED\"");
  EXPECT_LT(mod, add);
  EXPECT_LT(add, del);
  EXPECT_EQ(
      got->find(
          "\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" +
          rv),
      std::string::npos);  // web's creation is before the watch's resourceVersion
}

// kubectl get events -w lists, then watches from the list's resourceVersion:
// a pod whose event it listed, deleted before it changes again, was never
// seen changing by the watch, and its event's end was lost (it stayed on
// kubectl's screen). The deleted pod's events are read from what it was.
TEST_F(PodRegistryTest, AResumedEventsWatchHearsTheEventsOfADeletedPodGo) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  settled("web");  // its PodScheduled=False condition written: a FailedScheduling event
  auto listed = answered(req("GET", "/api/v1/namespaces/default/events"));
  ASSERT_NE(listed.body.find("\"name\":\"web.FailedScheduling\""), std::string::npos) << listed.body;
  std::string rv = field(listed.body, {"metadata", "resourceVersion"});
  RawConnection w;
  ASSERT_TRUE(w.connect(daemon_->port()));
  ASSERT_TRUE(
      w.send("GET /api/v1/namespaces/default/events?watch=1&resourceVersion=" + rv + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(w.read_until("\r\n\r\n"));  // the stream started: the store's watch is set up with it
  ASSERT_EQ(answered(req("DELETE", "/api/v1/namespaces/default/pods/web")).status, 200);
  auto got = w.read_until("\"type\":\"DELETED\"");
  ASSERT_TRUE(got) << "no DELETED event";
  std::string all = *got;
  while (all.find('\n', all.find("\"type\":\"DELETED\"")) == std::string::npos) {
    auto more = w.read_until("\n");
    ASSERT_TRUE(more) << all;
    all += *more;
  }
  EXPECT_NE(all.find("\"name\":\"web.FailedScheduling\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"reason\":\"FailedScheduling\""), std::string::npos) << all;
  EXPECT_EQ(all.find("\"type\":\"ADDED\""), std::string::npos) << "the listed event is not sent again: " << all;
}

// The Eviction API with no disruption budgets: every eviction is allowed. A
// dry run changes nothing; an eviction marks the pod as the API server does
// and deletes it (a pod with no task at once), answering 201 Success.
TEST_F(PodRegistryTest, AnEvictionMarksThePodAndDeletesIt) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  // Once the scheduler has said why it waits (its one write), the pod stays as it is.
  std::string rv = field(settled("web"), {"metadata", "resourceVersion"});
  auto dry = answered(req("POST", "/api/v1/namespaces/default/pods/web/eviction?dryRun=All",
                          R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web"}})"));
  EXPECT_EQ(dry.status, 201) << dry.body;
  auto dry_in_options = answered(req("POST", "/api/v1/namespaces/default/pods/web/eviction",
                                     R"({"metadata":{"name":"web"},"deleteOptions":{"dryRun":["All"]}})"));
  EXPECT_EQ(dry_in_options.status, 201) << dry_in_options.body;
  EXPECT_EQ(field(answered(req("GET", "/api/v1/namespaces/default/pods/web")).body, {"metadata", "resourceVersion"}),
            rv)
      << "a dry run wrote nothing";
  RawConnection w;
  ASSERT_TRUE(w.connect(daemon_->port()));
  ASSERT_TRUE(
      w.send("GET /api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(w.read_until("\r\n\r\n"));
  auto evicted = answered(req("POST", "/api/v1/namespaces/default/pods/web/eviction",
                              R"({"apiVersion":"policy/v1beta1","kind":"Eviction","metadata":{"name":"web",)"
                              R"("namespace":"default"},"deleteOptions":{"gracePeriodSeconds":0}})"));
  EXPECT_EQ(evicted.status, 201) << evicted.body;
  EXPECT_EQ(field(evicted.body, {"kind"}), "Status");
  EXPECT_EQ(field(evicted.body, {"status"}), "Success");
  EXPECT_EQ(answered(req("GET", "/api/v1/namespaces/default/pods/web")).status, 404);
  auto seen = w.read_until("\"type\":\"DELETED\"");
  ASSERT_TRUE(seen);
  EXPECT_NE(seen->find(R"("type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI",)"
                       R"("message":"Eviction API: evicting")"),
            std::string::npos)
      << "marked before it went: " << *seen;
  auto again = answered(req("POST", "/api/v1/namespaces/default/pods/web/eviction", R"({"metadata":{"name":"web"}})"));
  EXPECT_EQ(again.status, 404) << again.body;
}

TEST_F(PodRegistryTest, BindingAndStatusSubresources) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  auto bind =
      req("POST", "/api/v1/namespaces/default/pods/web/binding",
          R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"edge-1"}})");
  EXPECT_EQ(bind->status, 201) << bind->body;
  EXPECT_EQ(field(answered(req("GET", "/api/v1/namespaces/default/pods/web")).body, {"spec", "nodeName"}), "edge-1");
  auto again = req("POST", "/api/v1/namespaces/default/pods/web/binding", R"({"target":{"name":"edge-2"}})");
  EXPECT_EQ(again->status, 409);
  auto status = req("PATCH", "/api/v1/namespaces/default/pods/web/status",
                    R"({"status":{"phase":"Running","podIP":"10.0.0.7"},"spec":{"nodeName":"ignored"}})",
                    "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(status->status, 200) << status->body;
  EXPECT_EQ(field(status->body, {"status", "phase"}), "Running");
  EXPECT_EQ(field(status->body, {"spec", "nodeName"}), "edge-1");  // the status subresource touches status only
}

// Updates without a resourceVersion are retried past other writers, as
// Kubernetes' GuaranteedUpdate does: patches sent together all land, none is
// refused because another got in first; a precondition still refuses.
TEST_F(PodRegistryTest, UpdatesRacingOtherWritersAreRetried) {
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  constexpr int kWriters = 4;  // fewer than the attempts: every round lets one through
  std::vector<RawConnection> conns(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    std::string body = R"({"metadata":{"labels":{"w)" + std::to_string(i) + R"(":"yes"}}})";
    ASSERT_TRUE(conns[i].connect(daemon_->port()));
    ASSERT_TRUE(
        conns[i].send("PATCH /api/v1/namespaces/default/pods/web HTTP/1.1\r\nHost: t\r\n"
                      "Content-Type: application/merge-patch+json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body));
  }
  for (auto& c : conns) {
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  std::string pod = answered(req("GET", "/api/v1/namespaces/default/pods/web")).body;
  for (int i = 0; i < kWriters; ++i)
    EXPECT_EQ(field(pod, {"metadata", "labels", ("w" + std::to_string(i)).c_str()}), "yes");

  std::string stale = R"({"metadata":{"resourceVersion":"1","labels":{"late":"yes"}}})";
  auto refused =
      req("PATCH", "/api/v1/namespaces/default/pods/web", stale, "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(refused->status, 409) << refused->body;
}

TEST_F(PodRegistryTest, KubectlWorksAsUsersExpect) {
  std::string manifest = daemon_->data_dir() + "/pod.yaml";
  std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n    app: demo\nspec:\n"
                             "  containers:\n  - name: nginx\n    image: nginx:1.25\n";
  int code = 0;
  // 1.20 prints "Server Version: version.Info{...GitVersion:"v1.32.0-uvsched"...}", 1.32 "Server Version:
  // v1.32.0-uvsched".
  EXPECT_NE(kubectl("version", &code).find("v1.32.0-uvsched"), std::string::npos);
  EXPECT_EQ(code, 0);
  std::string out = kubectl("create -f " + manifest, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("pod/web created"), std::string::npos) << out;
  out = kubectl("get pods", &code);
  EXPECT_NE(out.find("NAME   READY   STATUS    RESTARTS   AGE"), std::string::npos) << out;
  EXPECT_NE(out.find("web    0/1     Pending   0"), std::string::npos) << out;
  out = kubectl("get pods -o wide");
  EXPECT_NE(out.find("NODE"), std::string::npos) << out;
  // By name, kubectl asks for a Table too: the same columns, one row.
  out = kubectl("get pod web");
  EXPECT_NE(out.find("web    0/1     Pending   0"), std::string::npos) << out;
  EXPECT_NE(kubectl("get pod web -o wide").find("NODE"), std::string::npos);
  EXPECT_NE(kubectl("get namespace default").find("Active"), std::string::npos);
  EXPECT_NE(kubectl("get pod web -o jsonpath={.metadata.name}").find("web"), std::string::npos);
  out = kubectl("get pod web -o yaml");
  EXPECT_NE(out.find("resourceVersion:"), std::string::npos) << out;
  EXPECT_NE(kubectl("get pods -l app=demo").find("web"), std::string::npos);
  EXPECT_NE(kubectl("get pods -l app=other").find("No resources found"), std::string::npos);
  EXPECT_NE(kubectl("label pod web tier=edge").find("pod/web labeled"), std::string::npos);
  EXPECT_NE(kubectl("get pods --show-labels").find("app=demo,tier=edge"), std::string::npos);
  EXPECT_NE(kubectl("get pods -A").find("default     web"), std::string::npos);
  // What needs a kubelet says so.
  out = kubectl("logs web", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("pods/log is not served: uvsched runs no kubelet"), std::string::npos) << out;
  out = kubectl("exec web -- ls", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("pods/exec is not served: uvsched runs no kubelet"), std::string::npos) << out;
  // (kubectl debug died of a nil pointer on a 404 without details.)
  out = kubectl("debug web --image=busybox", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("pods/ephemeralcontainers is not served: uvsched runs no kubelet"), std::string::npos) << out;
  EXPECT_EQ(out.find("panic"), std::string::npos) << out;
  out = kubectl("create -f " + manifest, &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("AlreadyExists"), std::string::npos) << out;
  out = kubectl("api-resources");
  EXPECT_NE(out.find("pods"), std::string::npos);
  EXPECT_NE(out.find("po "), std::string::npos) << out;
  // The reviews kubectl auth can-i and whoami post are listed as the API
  // server lists them.
  EXPECT_NE(out.find("selfsubjectaccessreviews"), std::string::npos) << out;
  EXPECT_NE(out.find("authorization.k8s.io/v1"), std::string::npos) << out;
  EXPECT_NE(out.find("selfsubjectreviews"), std::string::npos) << out;
  out = kubectl("api-resources --verbs=create --api-group=authorization.k8s.io -o name");
  EXPECT_NE(out.find("selfsubjectaccessreviews.authorization.k8s.io"), std::string::npos) << out;
  EXPECT_NE(out.find("selfsubjectrulesreviews.authorization.k8s.io"), std::string::npos) << out;
  EXPECT_NE(kubectl("delete pod web").find("pod \"web\" deleted"), std::string::npos);
  EXPECT_NE(kubectl("get pods").find("No resources found"), std::string::npos);
}

TEST_F(PodRegistryTest, KubectlApplyMergesContainersByName) {
  // kubectl apply sends only what changed in the manifest: for lists keyed by a
  // field (containers by name, ports by containerPort) the rest must survive.
  std::string manifest = daemon_->data_dir() + "/apply.yaml";
  auto write = [&](const std::string& image, const std::string& tier) {
    std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  labels:\n    tier: " << tier
                            << "\nspec:\n  containers:\n  - name: main\n    image: " << image
                            << "\n    ports:\n    - containerPort: 8080\n    env:\n    - name: MODE\n      value: a\n"
                               "    resources:\n      requests:\n        cpu: 250m\n"
                               "  - name: side\n    image: busybox\n";
  };
  auto containers = [&] {
    return field(answered(req("GET", "/api/v1/namespaces/default/pods/app")).body, {"spec", "containers"});
  };
  write("app:1", "one");
  int code = 0;
  std::string out = kubectl("apply -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  write("app:2", "two");
  out = kubectl("apply -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("pod/app configured"), std::string::npos) << out;
  std::string now = containers();
  EXPECT_NE(now.find(R"("image":"app:2")"), std::string::npos) << now;
  EXPECT_NE(now.find(R"("ports":[{"containerPort":8080}])"), std::string::npos) << now;
  EXPECT_NE(now.find(R"("env":[{"name":"MODE","value":"a"}])"), std::string::npos) << now;
  EXPECT_NE(now.find(R"("requests":{"cpu":"250m"})"), std::string::npos) << now;
  EXPECT_NE(now.find(R"("image":"busybox","name":"side")"), std::string::npos) << now;
  EXPECT_NE(kubectl("get pods --show-labels").find("tier=two"), std::string::npos);

  // kubectl patch's default type is strategic too: one container, by name.
  out = kubectl(R"(patch pod app -p '{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}')", &code);
  ASSERT_EQ(code, 0) << out;
  now = containers();
  EXPECT_NE(now.find(R"("image":"app:2")"), std::string::npos) << now;
  EXPECT_NE(now.find(R"("image":"busybox:2")"), std::string::npos) << now;

  // As in Kubernetes, a pod's spec is fixed but for images and a few fields:
  // it was placed and launched by the rest.
  out = kubectl(R"(patch pod app -p '{"spec":{"containers":[{"name":"extra","image":"x"}]}}')", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("pod updates may not change fields"), std::string::npos) << out;
  out = kubectl(R"(patch pod app --type merge -p '{"spec":{"containers":[{"name":"main","image":"app:3"}]}}')", &code);
  EXPECT_NE(code, 0) << "a merge patch replaces the list, dropping the sidecar: " << out;
  EXPECT_NE(out.find("pod updates may not change fields"), std::string::npos) << out;

  // Finalizers: a set to a strategic patch, a plain list to a merge patch.
  ASSERT_EQ((kubectl(R"(patch pod app -p '{"metadata":{"finalizers":["a/x"]}}')", &code), code), 0);
  ASSERT_EQ((kubectl(R"(patch pod app -p '{"metadata":{"finalizers":["b/y"]}}')", &code), code), 0);
  EXPECT_EQ(field(answered(req("GET", "/api/v1/namespaces/default/pods/app")).body, {"metadata", "finalizers"}),
            R"(["a/x","b/y"])");
  ASSERT_EQ((kubectl(R"(patch pod app --type merge -p '{"metadata":{"finalizers":["c/z"]}}')", &code), code), 0);
  EXPECT_EQ(field(answered(req("GET", "/api/v1/namespaces/default/pods/app")).body, {"metadata", "finalizers"}),
            R"(["c/z"])");

  out = kubectl(R"(patch pod app -p '{"spec":{"containers":[{"image":"z"}]}}')", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("merge key"), std::string::npos) << out;

  // And a JSON patch (RFC 6902) by index.
  out = kubectl(
      R"(patch pod app --type json -p '[{"op":"replace","path":"/spec/containers/1/image","value":"busybox:3"}]')",
      &code);
  ASSERT_EQ(code, 0) << out;
  now = containers();
  EXPECT_NE(now.find(R"("image":"busybox:3")"), std::string::npos) << now;
  out = kubectl(R"(patch pod app --type json -p '[{"op":"remove","path":"/spec/containers/5"}]')", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("does not exist"), std::string::npos) << out;
}

// kubectl apply --server-side, as GitOps tools use it: it creates, applies
// again without a change, is refused (409, naming the field and its manager)
// when another manager set that field otherwise, takes the field with
// --force-conflicts, and takes back a label it no longer applies. A pod made
// by `kubectl run` belongs to kubectl-run, so applying another image over it
// conflicts too. Namespaces are applied the same way.
TEST_F(PodRegistryTest, KubectlServerSideApplyOwnsFieldsAndConflicts) {
  std::string manifest = daemon_->data_dir() + "/ssa.yaml";
  auto write = [&](const std::string& image, const std::string& labels) {
    std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssa\n  labels: {" << labels
                            << "}\nspec:\n  containers:\n  - name: c\n    image: " << image << "\n";
  };
  auto pod = [&] { return answered(req("GET", "/api/v1/namespaces/default/pods/ssa")).body; };
  int code = 0;
  write("nginx:1", "app: web, tier: one");
  std::string out = kubectl("apply --server-side -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("pod/ssa serverside-applied"), std::string::npos) << out;
  std::string rv = field(pod(), {"metadata", "resourceVersion"});
  out = kubectl("apply --server-side -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("pod/ssa serverside-applied"), std::string::npos) << out;
  EXPECT_EQ(field(pod(), {"spec", "containers"}), R"([{"image":"nginx:1","name":"c"}])");
  std::string managed = field(pod(), {"metadata", "managedFields"});
  EXPECT_NE(managed.find(R"("manager":"kubectl","operation":"Apply")"), std::string::npos) << managed;
  EXPECT_NE(managed.find(R"("k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}})"), std::string::npos) << managed;

  write("nginx:2", "app: web");  // the same app label: shared, no conflict
  out = kubectl("apply --server-side --field-manager=ci -f " + manifest, &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(
      out.find(R"(Apply failed with 1 conflict: conflict with "kubectl" using v1: .spec.containers[name="c"].image)"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("--force-conflicts"), std::string::npos) << out;  // kubectl's own advice: it read a 409 Conflict
  EXPECT_EQ(field(pod(), {"spec", "containers"}), R"([{"image":"nginx:1","name":"c"}])");
  out = kubectl("apply --server-side --field-manager=ci --force-conflicts -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(field(pod(), {"spec", "containers"}), R"([{"image":"nginx:2","name":"c"}])");
  // kubectl's own manifest again: the image is ci's now.
  write("nginx:1", "app: web");
  out = kubectl("apply --server-side -f " + manifest, &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find(R"(conflict with "ci")"), std::string::npos) << out;
  // Without the image, kubectl's apply goes through and takes back its tier
  // label (which ci does not set; app, which both set, would stay).
  std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssa\n  labels: {app: web}\n"
                             "spec:\n  containers:\n  - name: c\n";
  out = kubectl("apply --server-side -f " + manifest, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(field(pod(), {"metadata", "labels"}), R"({"app":"web"})");
  EXPECT_EQ(field(pod(), {"spec", "containers"}), R"([{"image":"nginx:2","name":"c"}])");

  ASSERT_EQ((kubectl("run ran --image=busybox --restart=Never", &code), code), 0);
  EXPECT_NE(field(answered(req("GET", "/api/v1/namespaces/default/pods/ran")).body, {"metadata", "managedFields"})
                .find(R"("manager":"kubectl-run","operation":"Update")"),
            std::string::npos);
  std::ofstream(manifest)
      << "apiVersion: v1\nkind: Pod\nmetadata: {name: ran}\nspec:\n  containers: [{name: ran, image: busybox:2}]\n";
  out = kubectl("apply --server-side -f " + manifest, &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find(R"(conflict with "kubectl-run" using v1: .spec.containers[name="ran"].image)"), std::string::npos)
      << out;

  std::ofstream(manifest) << "apiVersion: v1\nkind: Namespace\nmetadata: {name: gitops, labels: {team: a}}\n";
  for (int i = 0; i < 2; ++i) {
    out = kubectl("apply --server-side -f " + manifest, &code);
    ASSERT_EQ(code, 0) << out;
    EXPECT_NE(out.find("namespace/gitops serverside-applied"), std::string::npos) << out;
  }
  EXPECT_EQ(field(answered(req("GET", "/api/v1/namespaces/gitops")).body, {"metadata", "labels"}), R"({"team":"a"})");
  ASSERT_EQ((kubectl("run inside -n gitops --image=busybox", &code), code), 0);
}

// The apply options the API server refuses, and what uvsched cannot read.
TEST_F(PodRegistryTest, ServerSideApplyRefusesWhatTheApiServerRefuses) {
  const std::string apply = "Content-Type: application/apply-patch+yaml\r\n";
  const std::string body =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  auto r = req("PATCH", "/api/v1/namespaces/default/pods/a", body, apply);
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("fieldManager: Required value: is required for apply patch"), std::string::npos) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a?fieldManager=m", "apiVersion: v1\nkind: Pod\n", apply);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("not block YAML"), std::string::npos) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a?fieldManager=m",
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}})", apply);
  EXPECT_EQ(r->status, 400) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a?fieldManager=m",
          R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"nodeName":{}}})", apply);
  EXPECT_EQ(r->status, 400) << r->body;  // typed decoding, as for any body
  EXPECT_NE(r->body.find("PodSpec.spec.nodeName of type string"), std::string::npos) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a?fieldManager=m", body, apply);
  ASSERT_EQ(r->status, 201) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a?force=true", R"({"metadata":{"labels":{"x":"y"}}})",
          "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("force: Forbidden: may not be specified for non-apply patch"), std::string::npos) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default/pods/a/status?fieldManager=m", body, apply);
  EXPECT_EQ(r->status, 415) << r->body;
  r = req("PATCH", "/api/v1/namespaces/default", R"({"metadata":{"labels":{"x":"y"}}})",
          "Content-Type: application/merge-patch+json\r\n");
  EXPECT_EQ(r->status, 415) << r->body;
  EXPECT_NE(r->body.find("application/apply-patch+yaml"), std::string::npos) << r->body;
}

TEST_F(PodRegistryTest, FinalizersHoldADeletedPodUntilTheLastIsRemoved) {
  const std::string merge = "Content-Type: application/merge-patch+json\r\n";
  const std::string strategic = "Content-Type: application/strategic-merge-patch+json\r\n";
  const std::string path = "/api/v1/namespaces/default/pods/held";
  ASSERT_EQ(req("POST", "/api/v1/namespaces/default/pods",
                R"({"metadata":{"name":"held","finalizers":["example.com/a","example.com/b"],)"
                R"("deletionTimestamp":"2020-01-01T00:00:00Z"},"spec":{"containers":[{"name":"c","image":"i"}]}})")
                ->status,
            201);
  settled("held");
  EXPECT_EQ(field(answered(req("GET", path)).body, {"metadata", "deletionTimestamp"}), "<missing>")
      << "a create cannot start a deletion";
  // An update cannot start one either.
  ASSERT_EQ(answered(req("PATCH", path,
                         R"({"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z","finalizers":null}})", merge))
                .status,
            200);
  EXPECT_EQ(answered(req("GET", path)).status, 200) << "the pod must still be there";
  ASSERT_EQ(
      answered(req("PATCH", path, R"({"metadata":{"finalizers":["example.com/a","example.com/b"]}})", merge)).status,
      200);

  auto del = req("DELETE", path);
  ASSERT_EQ(del->status, 200) << del->body;
  EXPECT_NE(field(del->body, {"metadata", "deletionTimestamp"}), "<missing>") << del->body;
  auto still = req("GET", path);
  ASSERT_EQ(still->status, 200) << "finalizers hold it";
  EXPECT_NE(kubectl("get pods").find("Terminating"), std::string::npos);
  auto added = req("PATCH", path, R"({"metadata":{"finalizers":["example.com/c"]}})", strategic);
  EXPECT_EQ(added->status, 422) << added->body;
  EXPECT_NE(added->body.find("no new finalizers"), std::string::npos) << added->body;
  EXPECT_EQ(answered(req("DELETE", path)).status, 200) << "deleting again changes nothing";

  ASSERT_EQ(answered(req("PATCH", path, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/a"]}})",
                         strategic))
                .status,
            200);
  EXPECT_EQ(field(answered(req("GET", path)).body, {"metadata", "finalizers"}), R"(["example.com/b"])");
  auto last =
      req("PATCH", path, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/b"]}})", strategic);
  EXPECT_EQ(last->status, 200) << last->body;
  EXPECT_EQ(answered(req("GET", path)).status, 404) << "the last finalizer gone, the pod goes";
}

TEST_F(PodRegistryTest, KubectlWatchShowsCreatesAndDeletes) {
  // kubectl lists, then watches from the list's resourceVersion: once the
  // first pod is printed, nothing later can be missed.
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", pod_named("first", "x"))).status, 201);
  std::string log = daemon_->data_dir() + "/watch.out";
  std::string out;
  // kubectl -w runs while another client changes pods, and is stopped once
  // it has shown them (`timeout` only bounds a hang: it is not the test's
  // clock, so kubectl's own start-up on a loaded machine cannot eat it).
  ASSERT_EQ(run_shell("timeout 60 kubectl --cache-dir " + kube_cache_.path() + " --server " + base_ +
                          " get pods -w > " + log + " 2>&1 & echo $!",
                      &out),
            0);
  const pid_t watcher = static_cast<pid_t>(std::atol(out.c_str()));
  ASSERT_GT(watcher, 0) << out;
  struct StopWatcher {
    pid_t pid;
    ~StopWatcher() { ::kill(pid, SIGTERM); }
  } stop_watcher{watcher};
  auto until = std::chrono::steady_clock::now() + 30s;
  std::string seen;
  while (seen.find("first") == std::string::npos && std::chrono::steady_clock::now() < until) {
    std::ifstream in(log);
    seen.assign(std::istreambuf_iterator<char>(in), {});
    std::this_thread::sleep_for(20ms);  // polling a file another process writes
  }
  ASSERT_EQ(answered(req("POST", "/api/v1/namespaces/default/pods", kPod)).status, 201);
  ASSERT_EQ(answered(req("DELETE", "/api/v1/namespaces/default/pods/web")).status, 200);
  while (std::count(seen.begin(), seen.end(), '\n') < 4 && std::chrono::steady_clock::now() < until) {
    std::ifstream in(log);
    seen.assign(std::istreambuf_iterator<char>(in), {});
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_NE(seen.find("NAME    READY   STATUS    RESTARTS   AGE"), std::string::npos) << seen;
  EXPECT_GE(std::count(seen.begin(), seen.end(), '\n'), 4) << seen;  // header, first, web created, web deleted
  EXPECT_NE(seen.find("\nweb     0/1     Pending"), std::string::npos) << seen;
}

TEST(PodRegistryOnEtcd, APodWrittenStraightIntoEtcdShowsUpInWatchesAndLists) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  DaemonProcess daemon({"--store", "etcd:" + etcd.url()});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();  // a standby would hand the watch on
  RawConnection w;
  ASSERT_TRUE(w.connect(daemon.port()));
  ASSERT_TRUE(w.send("GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(w.read_until("\r\n\r\n"));  // the stream is open
  // Another writer (etcdctl, a standby uvsched) puts a pod under /registry.
  std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"outside","namespace":"default"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"phase":"Pending"}})";
  std::string put = std::string(R"({"key":")") + "L3JlZ2lzdHJ5L3BvZHMvZGVmYXVsdC9vdXRzaWRl" + R"(","value":")";
  {
    // base64 of the pod, by way of the shell's base64 (the test's own encoder would prove nothing).
    std::string enc;
    ASSERT_EQ(run_shell("printf '%s' '" + pod + "' | base64 -w0", &enc), 0);
    put += enc + "\"}";
  }
  auto r = http_request(etcd.client_port(), "POST", "/v3/kv/put", put);
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  auto got = w.read_until("outside");
  ASSERT_TRUE(got);
  EXPECT_NE(got->find("\"type\":\"ADDED\""), std::string::npos) << *got;
  auto list = http_request(daemon.port(), "GET", "/api/v1/namespaces/default/pods/outside");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  std::string etcdctl;
  EXPECT_EQ(run_shell("ETCDCTL_API=3 etcdctl --endpoints " + etcd.url() + " get --prefix /registry/pods/ --keys-only",
                      &etcdctl),
            0);
  EXPECT_NE(etcdctl.find("/registry/pods/default/outside"), std::string::npos) << etcdctl;
  EXPECT_EQ(daemon.stop(SIGTERM), 0);
}

// Pods go into etcd packed (a fifth of the bytes for etcd to handle), or as
// plain JSON with --etcd-values plain; a daemon reads both forms, so the two
// can share one etcd (or follow each other on it).
TEST(PodRegistryOnEtcd, PodsArePackedInEtcdUnlessAskedForPlainAndBothFormsRead) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  auto stored = [&](const std::string& name) {
    std::string out;
    run_shell("ETCDCTL_API=3 etcdctl --endpoints " + etcd.url() + " get --print-value-only /registry/pods/default/" +
                  name + " | head -c 4 | od -An -c",
              &out);
    return out;
  };
  DaemonProcess packed({"--store", "etcd:" + etcd.url()});
  ASSERT_TRUE(packed.start()) << packed.log();
  ASSERT_TRUE(packed.wait_for_log("event=leader_elected")) << packed.log();
  auto r = http_request(packed.port(), "POST", "/api/v1/namespaces/default/pods", pod_named("small", "x"));
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  EXPECT_NE(stored("small").find("\\0   u   v   z"), std::string::npos) << stored("small");
  EXPECT_EQ(packed.stop(SIGTERM), 0);

  DaemonProcess plain({"--store", "etcd:" + etcd.url(), "--etcd-values", "plain"});
  ASSERT_TRUE(plain.start()) << plain.log();
  ASSERT_TRUE(plain.wait_for_log("event=leader_elected")) << plain.log();  // it answers before it leads
  r = http_request(plain.port(), "POST", "/api/v1/namespaces/default/pods", pod_named("readable", "x"));
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  EXPECT_NE(stored("readable").find("{   \"   k   i"), std::string::npos) << stored("readable");
  auto small = http_request(plain.port(), "GET", "/api/v1/namespaces/default/pods/small");  // the packed one
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  EXPECT_NE(small->body.find("\"name\":\"small\""), std::string::npos) << small->body;
  EXPECT_EQ(plain.stop(SIGTERM), 0);
}

TEST_F(PodRegistryTest, PythonClientWorks) {
  std::string script = daemon_->data_dir() + "/client.py";
  std::ofstream(script) << R"PY(
import sys
from kubernetes import client, watch
cfg = client.Configuration(); cfg.host = sys.argv[1]
api = client.CoreV1Api(client.ApiClient(cfg))
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py", "labels": {"app": "py"}},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
api.create_namespaced_pod("default", pod)
assert [p.metadata.name for p in api.list_namespaced_pod("default", label_selector="app=py").items] == ["py"]
assert api.list_namespaced_pod("default", label_selector="app=nope").items == []
assert [p.metadata.name for p in api.list_pod_for_all_namespaces(field_selector="metadata.name=py").items] == ["py"]
assert api.read_namespaced_pod("py", "default").status.phase == "Pending"
assert api.patch_namespaced_pod("py", "default", {"metadata": {"labels": {"extra": "1"}}}).metadata.labels == {"app": "py", "extra": "1"}
# A list body goes as a JSON patch (RFC 6902).
ops = [{"op": "test", "path": "/metadata/labels/extra", "value": "1"},
       {"op": "add", "path": "/metadata/labels/jp", "value": "2"},
       {"op": "remove", "path": "/metadata/labels/app"}]
assert api.patch_namespaced_pod("py", "default", ops).metadata.labels == {"extra": "1", "jp": "2"}
seen = []
for ev in watch.Watch().stream(api.list_namespaced_pod, "default", timeout_seconds=2):
    seen.append((ev["type"], ev["object"].metadata.name))
assert seen == [("ADDED", "py")], seen
api.delete_namespaced_pod("py", "default")
try:
    api.read_namespaced_pod("py", "default")
    raise SystemExit("pod still there")
except client.exceptions.ApiException as e:
    assert e.status == 404, e.status
# Labels as the API server validates them.
bad = dict(pod, metadata={"name": "py2", "labels": {"a b": "c"}})
try:
    api.create_namespaced_pod("default", bad)
    raise SystemExit("a bad label was stored")
except client.exceptions.ApiException as e:
    assert e.status == 422 and "metadata.labels" in e.body, (e.status, e.body)
# What may I do? Without a token file, everything.
review = client.AuthorizationV1Api(client.ApiClient(cfg)).create_self_subject_access_review(
    {"spec": {"resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "default"}}})
assert review.status.allowed is True, review
# Deleting a namespace's pods by selector: only those, and a dry run none.
for name, tier in [("c1", "a"), ("c2", "a"), ("c3", "b")]:
    api.create_namespaced_pod("default", dict(pod, metadata={"name": name, "labels": {"tier": tier}}))
api.delete_collection_namespaced_pod("default", label_selector="tier=a", dry_run="All")
assert len(api.list_namespaced_pod("default", label_selector="tier=a").items) == 2
api.delete_collection_namespaced_pod("default", label_selector="tier=a")
assert [p.metadata.name for p in api.list_namespaced_pod("default").items] == ["c3"]
# A disruption budget over c3: its status comes from the pods it selects (c3
# waits: expected, not healthy), and a pod that has not started is evicted whatever it says.
policy = client.PolicyV1Api(client.ApiClient(cfg))
policy.create_namespaced_pod_disruption_budget("default", client.V1PodDisruptionBudget(
    metadata=client.V1ObjectMeta(name="b"),
    spec=client.V1PodDisruptionBudgetSpec(min_available=1, selector=client.V1LabelSelector(match_labels={"tier": "b"}))))
import time
deadline = time.monotonic() + 10
while policy.read_namespaced_pod_disruption_budget("b", "default").status.observed_generation != 1:
    assert time.monotonic() < deadline, "the budget's status was never computed"
    time.sleep(0.05)
st = policy.read_namespaced_pod_disruption_budget("b", "default").status
assert (st.expected_pods, st.current_healthy, st.desired_healthy, st.disruptions_allowed) == (1, 0, 1, 0), st
assert st.conditions[0].reason == "InsufficientPods", st
assert [b.metadata.name for b in policy.list_pod_disruption_budget_for_all_namespaces().items] == ["b"]
try:
    policy.create_namespaced_pod_disruption_budget("default", {"metadata": {"name": "bad"},
        "spec": {"minAvailable": 1, "maxUnavailable": "10%"}})
    raise SystemExit("a budget with both was stored")
except client.exceptions.ApiException as e:
    assert e.status == 422 and "cannot be both set" in e.body, (e.status, e.body)
# An eviction (as the descheduler posts it): a dry run leaves the pod, a real one deletes it.
evict = client.V1Eviction(metadata=client.V1ObjectMeta(name="c3", namespace="default"))
api.create_namespaced_pod_eviction("c3", "default", client.V1Eviction(
    metadata=client.V1ObjectMeta(name="c3"), delete_options=client.V1DeleteOptions(dry_run=["All"])))
assert api.read_namespaced_pod("c3", "default").metadata.name == "c3"
api.create_namespaced_pod_eviction("c3", "default", evict)
assert api.list_namespaced_pod("default").items == []
try:
    api.create_namespaced_pod_eviction("c3", "default", evict)
    raise SystemExit("an absent pod was evicted")
except client.exceptions.ApiException as e:
    assert e.status == 404, e.status
policy.delete_namespaced_pod_disruption_budget("b", "default")
# A budget whose field has the wrong JSON type is the typed decoder's 400.
try:
    policy.create_namespaced_pod_disruption_budget("default", {"metadata": {"name": "typed"},
        "spec": {"minAvailable": True}})
    raise SystemExit("a budget of the wrong type was stored")
except client.exceptions.ApiException as e:
    assert e.status == 400 and "cannot unmarshal bool" in e.body, (e.status, e.body)
# The nodes' leases and the services: none here (no agent has subscribed; uvsched runs no services).
assert client.CoordinationV1Api(client.ApiClient(cfg)).list_namespaced_lease("kube-node-lease").items == []
assert api.list_namespaced_service("kube-system").items == []
# A watch from a resourceVersion the store has not reached: the API server's 504, not a silent wait.
ahead = str(int(api.list_namespaced_pod("default").metadata.resource_version) + 1000)
try:
    for ev in watch.Watch().stream(api.list_namespaced_pod, "default", resource_version=ahead, timeout_seconds=5):
        raise SystemExit("an event from a revision not reached: %s" % ev)
    raise SystemExit("the watch ended without an error")
except client.exceptions.ApiException as e:
    assert e.status == 504 and b"Too large resource version" in e.body, (e.status, e.body)
print("python client ok")
)PY";
  std::string out;
  int rc = run_shell("/usr/bin/python3 " + script + " " + base_, &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("python client ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace uvsched::test
