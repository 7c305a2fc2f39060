// Pod groups and priorities as a user meets them: kubectl creates PodGroups,
// PriorityClasses and pods, simulated agents (tools/agent_sim) offer and run
// them, and what kubectl shows is what is checked: a gang waits whole while
// single pods run, and runs whole once it fits; two gangs never each hold
// part of the cluster; a high-priority pod evicts the fewest lower pods and a
// preemptionPolicy: Never pod waits.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "tests/support/agent_sim_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

class GangPriorityTest : public AgentSimTest {
 protected:
  std::string kubectl(const std::string& args, int* code = nullptr) {
    std::string out;
    int rc = run_shell("kubectl --cache-dir " + cache_.path() + " --server http://127.0.0.1:" + std::to_string(port()) +
                           " " + args + " 2>&1",
                       &out);
    if (code) *code = rc;
    return out;
  }
  // Writes `yaml` to a file and has kubectl create it; its exit code must be 0.
  void create_yaml(const std::string& yaml) {
    std::string path = cache_.path() + "/m" + std::to_string(manifests_++) + ".yaml";
    std::ofstream(path) << yaml;
    int code = 0;
    std::string out = kubectl("create -f " + path, &code);
    ASSERT_EQ(code, 0) << out;
  }
  static std::string pod_yaml(const std::string& name, const std::string& cpu, const std::string& extra_meta = "",
                              const std::string& extra_spec = "") {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + extra_meta + "spec:\n" + extra_spec +
           "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
           "\", memory: 64Mi}}}]\n---\n";
  }
  static std::string member_yaml(const std::string& name, const std::string& group) {
    return pod_yaml(name, "1", "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n");
  }
  static std::string group_yaml(const std::string& name, int min) {
    return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
           "}\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
  }
  std::string node_of(const std::string& name) {
    return kubectl("get pod " + name + " -o jsonpath='{.spec.nodeName}'");
  }
  // Waits for `kubectl get <what> -o jsonpath=<path>` to print `want`.
  bool shows(const std::string& what, const std::string& path, const std::string& want,
             std::chrono::milliseconds deadline = 15s) {
    auto until = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < until) {
      if (kubectl("get " + what + " -o jsonpath='" + path + "'") == want) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }
  size_t bound_among(const std::vector<std::string>& pods) {
    size_t n = 0;
    for (const auto& p : pods) n += !node_of(p).empty();
    return n;
  }
  TempDir cache_;
  int manifests_ = 0;
};

TEST_F(GangPriorityTest, AGangWaitsWholeWhileSinglePodsRunAndRunsWholeWhenItFits) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 3 --cpus 1 --mem 1024"));
  ASSERT_TRUE(agents_connected(3)) << daemon_->log();
  EXPECT_NE(kubectl("api-resources").find("podgroups"), std::string::npos) << kubectl("api-resources");
  ASSERT_NO_FATAL_FAILURE(create_yaml(group_yaml("gang", 4) + member_yaml("g0", "gang") + member_yaml("g1", "gang") +
                                      member_yaml("g2", "gang") + member_yaml("g3", "gang")));
  // Three slots for four: every member says why, none is bound.
  ASSERT_TRUE(pod_shows("g3", "pod group default/gang: 3 of its 4 members needed (minMember 4) fit now")) << pod("g3");
  EXPECT_EQ(bound_among({"g0", "g1", "g2", "g3"}), 0u);
  std::string describe = kubectl("describe pod g0");
  EXPECT_NE(describe.find("FailedScheduling"), std::string::npos) << describe;
  EXPECT_NE(describe.find("pod group default/gang"), std::string::npos) << describe;
  // A dry run of a group says what would become of its members now, and stores nothing.
  std::string path = cache_.path() + "/dry.yaml";
  std::ofstream(path) << group_yaml("other", 2);
  std::string dry = kubectl("create --dry-run=server -f " + path + " -o yaml");
  EXPECT_NE(dry.find("uvsched.io/dry-run-placement: 'pending: no member pods yet"), std::string::npos) << dry;
  EXPECT_NE(kubectl("get podgroup other").find("NotFound"), std::string::npos) << "a dry run stores nothing";
  std::ofstream(path) << group_yaml("gang", 3);
  dry = kubectl("replace --dry-run=server -f " + path + " -o yaml");
  EXPECT_NE(dry.find("would place 3 members now:"), std::string::npos) << dry;
  EXPECT_EQ(kubectl("get podgroup gang -o jsonpath='{.spec.minMember}'"), "4");
  EXPECT_EQ(bound_among({"g0", "g1", "g2", "g3"}), 0u);
  // A single pod behind it is not held up by it.
  ASSERT_NO_FATAL_FAILURE(create_yaml(pod_yaml("single", "1")));
  ASSERT_TRUE(pod_shows("single", "\"nodeName\":\"sim-")) << pod("single") << daemon_->log();
  EXPECT_EQ(bound_among({"g0", "g1", "g2", "g3"}), 0u);
  EXPECT_TRUE(shows("podgroup gang", "{.status.phase}", "Pending"));
  std::string table = kubectl("get podgroups");
  EXPECT_NE(table.find("MIN MEMBER"), std::string::npos) << table;
  // The single pod goes and two more agents come: four slots, the gang runs whole.
  kubectl("delete pod single");
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --prefix extra --cpus 1 --mem 1024"));
  EXPECT_TRUE(shows("podgroup gang", "{.status.phase}", "Running")) << kubectl("get podgroup gang -o yaml");
  EXPECT_EQ(bound_among({"g0", "g1", "g2", "g3"}), 4u) << kubectl("get pods -o wide");
  EXPECT_EQ(kubectl("get podgroup gang -o jsonpath='{.status.running}'"), "4");
}

// A gang whose members must not share a host is planned as kube-scheduler
// would place them one by one: each member's anti-affinity counts the
// members planned before it. Three members on three agents go one each;
// a gang of four on three agents waits whole.
TEST_F(GangPriorityTest, AGangsMembersKeepTheirAntiAffinityToEachOther) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 3 --cpus 8 --mem 8192"));
  ASSERT_TRUE(agents_connected(3)) << daemon_->log();
  auto member = [](const std::string& name, const std::string& group) {
    return pod_yaml(name, "1", "  labels: {scheduling.x-k8s.io/pod-group: " + group + ", ring: " + group + "}\n",
                    "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - labelSelector: {matchLabels: {ring: " +
                        group +
                        "}}\n"
                        "        topologyKey: kubernetes.io/hostname\n");
  };
  ASSERT_NO_FATAL_FAILURE(
      create_yaml(group_yaml("three", 3) + member("t0", "three") + member("t1", "three") + member("t2", "three")));
  EXPECT_TRUE(shows("podgroup three", "{.status.phase}", "Running")) << kubectl("get pods -o wide");
  std::set<std::string> nodes{node_of("t0"), node_of("t1"), node_of("t2")};
  EXPECT_EQ(nodes.size(), 3u) << kubectl("get pods -o wide");
  EXPECT_FALSE(nodes.count("")) << kubectl("get pods -o wide");
  ASSERT_NO_FATAL_FAILURE(create_yaml(group_yaml("four", 4) + member("f0", "four") + member("f1", "four") +
                                      member("f2", "four") + member("f3", "four")));
  EXPECT_TRUE(pod_shows("f3", "pod group default/four: 3 of its 4 members needed (minMember 4) fit now")) << pod("f3");
  EXPECT_NE(pod("f0").find("didn't match pod anti-affinity rules"), std::string::npos) << pod("f0");
  EXPECT_EQ(bound_among({"f0", "f1", "f2", "f3"}), 0u) << kubectl("get pods -o wide");
}

TEST_F(GangPriorityTest, TwoGangsThatTogetherExceedTheClusterNeverEachHoldPart) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 4 --cpus 1 --mem 1024"));
  ASSERT_TRUE(agents_connected(4)) << daemon_->log();
  std::string yaml = group_yaml("a", 3) + group_yaml("b", 3);
  for (int i = 0; i < 3; ++i)
    yaml += member_yaml("a" + std::to_string(i), "a") + member_yaml("b" + std::to_string(i), "b");
  ASSERT_NO_FATAL_FAILURE(create_yaml(yaml));
  // One gang runs whole; the other holds nothing, though a slot is free.
  auto until = std::chrono::steady_clock::now() + 15s;
  size_t a = 0, b = 0;
  while (std::chrono::steady_clock::now() < until) {
    a = bound_among({"a0", "a1", "a2"});
    b = bound_among({"b0", "b1", "b2"});
    if (a + b == 3) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(a + b, 3u) << kubectl("get pods -o wide");
  EXPECT_TRUE((a == 3 && b == 0) || (a == 0 && b == 3)) << "a=" << a << " b=" << b;
  std::string waiting = a == 3 ? "b0" : "a0";
  EXPECT_TRUE(pod_shows(waiting, "1 of its 3 members needed (minMember 3) fit now")) << pod(waiting);
  // A group that does not exist holds its pods back, and says so.
  ASSERT_NO_FATAL_FAILURE(create_yaml(member_yaml("orphan", "nowhere")));
  EXPECT_TRUE(pod_shows("orphan", "pod group default/nowhere does not exist")) << pod("orphan");
  EXPECT_TRUE(node_of("orphan").empty());
}

TEST_F(GangPriorityTest, AHighPriorityPodEvictsTheFewestLowerPodsAndNeverWaits) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --prefix a --labels zone=a --cpus 2 --mem 1024"));
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --prefix b --labels zone=b --cpus 2 --mem 1024"));
  ASSERT_TRUE(agents_connected(2)) << daemon_->log();
  ASSERT_NO_FATAL_FAILURE(
      create_yaml("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n"
                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: polite}\nvalue: 1000\n"
                  "preemptionPolicy: Never\n"));
  std::string low = "  priorityClassName: low\n";
  // Two small low pods on a-0, one large one on b-0: the cluster is full.
  ASSERT_NO_FATAL_FAILURE(create_yaml(pod_yaml("low-a1", "1", "", low + "  nodeSelector: {zone: a}\n") +
                                      pod_yaml("low-a2", "1", "", low + "  nodeSelector: {zone: a}\n") +
                                      pod_yaml("low-b", "2", "", low + "  nodeSelector: {zone: b}\n")));
  for (const char* p : {"low-a1", "low-a2", "low-b"})
    ASSERT_TRUE(shows("pod " + std::string(p), "{.status.phase}", "Running"));
  EXPECT_EQ(kubectl("get pod low-b -o jsonpath='{.spec.priority}'"), "10");
  // Never: it waits, and evicts nobody.
  ASSERT_NO_FATAL_FAILURE(create_yaml(pod_yaml("polite", "2", "", "  priorityClassName: polite\n")));
  ASSERT_TRUE(pod_shows("polite", "Insufficient cpu")) << pod("polite");
  EXPECT_EQ(metric_value(port(), "uvsched_preemptions_total"), -1) << "nothing was preempted";
  // High: one victim (low-b on b-0) rather than two on a-0.
  ASSERT_NO_FATAL_FAILURE(create_yaml(pod_yaml("urgent", "2", "", "  priorityClassName: high\n")));
  EXPECT_TRUE(shows("pod urgent", "{.spec.nodeName}", "b-0")) << kubectl("get pods -o wide") << daemon_->log();
  EXPECT_EQ(metric_value(port(), "uvsched_preemptions_total"), 1);
  std::string victim = kubectl("describe pod low-b");
  EXPECT_NE(victim.find("Preempted by default/urgent (priority 1000) on node b-0"), std::string::npos) << victim;
  EXPECT_NE(kubectl("get pod low-b -o jsonpath='{.status.conditions[?(@.type==\"DisruptionTarget\")].reason}'")
                .find("PreemptionByScheduler"),
            std::string::npos);
  EXPECT_EQ(node_of("low-a1"), "a-0");
  EXPECT_EQ(node_of("low-a2"), "a-0");
  EXPECT_TRUE(node_of("polite").empty()) << "the preempted room was the urgent pod's";
  // No loop: the victim waits (lower priority), nothing more is evicted.
  EXPECT_TRUE(pod_shows("low-b", "Insufficient cpu")) << pod("low-b");  // re-queued and tried again
  EXPECT_EQ(metric_value(port(), "uvsched_preemptions_total"), 1);
  // An unknown class is refused as the API server refuses it.
  int code = 0;
  std::string path = cache_.path() + "/bad.yaml";
  std::ofstream(path) << pod_yaml("bad", "1", "", "  priorityClassName: nope\n");
  std::string out = kubectl("create -f " + path, &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("pods \"bad\" is forbidden: no PriorityClass with name nope was found"), std::string::npos) << out;
}

// A globalDefault class gives its value to pods that name none, and a second
// globalDefault is refused, as Kubernetes' Priority admission plugin does.
TEST_F(GangPriorityTest, OneGlobalDefaultClassAppliesAndASecondIsRefused) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(
      create_yaml("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: everyone}\nvalue: 77\n"
                  "globalDefault: true\n"));
  // Until the scheduler has read the class, a dry run of a pod shows 0: wait for 77.
  std::string path = cache_.path() + "/plain.yaml";
  std::ofstream(path) << pod_yaml("plain", "1");
  auto until = std::chrono::steady_clock::now() + 10s;
  std::string priority;
  while (std::chrono::steady_clock::now() < until &&
         (priority = kubectl("create --dry-run=server -f " + path + " -o jsonpath='{.spec.priority}'")) != "77")
    std::this_thread::sleep_for(50ms);
  ASSERT_EQ(priority, "77");
  std::string second = cache_.path() + "/second.yaml";
  std::ofstream(second) << "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: another}\n"
                           "value: 5\nglobalDefault: true\n";
  int code = 0;
  std::string out = kubectl("create -f " + second, &code);
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("priorityclasses.scheduling.k8s.io \"another\" is forbidden: PriorityClass everyone is already "
                     "marked as default. Only one default can exist"),
            std::string::npos)
      << out;
  EXPECT_NE(kubectl("get priorityclass another", &code).find("NotFound"), std::string::npos) << "nothing stored";
  // Not a default: allowed; and the default class itself may be replaced.
  std::ofstream(second) << "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: another}\n"
                           "value: 5\n";
  out = kubectl("create -f " + second, &code);
  EXPECT_EQ(code, 0) << out;
  out = kubectl("label priorityclass everyone tier=one", &code);
  EXPECT_EQ(code, 0) << out;
  ASSERT_NO_FATAL_FAILURE(create_yaml(pod_yaml("plain", "1")));
  EXPECT_EQ(kubectl("get pod plain -o jsonpath='{.spec.priority}'"), "77");
}

}  // namespace
}  // namespace uvsched::test
