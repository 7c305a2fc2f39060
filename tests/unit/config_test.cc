#include "app/config.h"

#include <gtest/gtest.h>

#include <map>

namespace uvsched {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ConfigResult parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  return parse_config(args, env_of(std::move(env)));
}

// KubeML's PS serves Prometheus on its own listener, :8080, on the PS's host.
TEST(Config, ThePsMetricsUrlDefaultsToPort8080OnThePsHost) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{}, "http://127.0.0.1:8080/metrics"},
      {{"--ps-url", "http://ps.kubeml:9090"}, "http://ps.kubeml:8080/metrics"},
      {{"--ps-url", "https://[::1]:9090/x"}, "https://[::1]:8080/metrics"},
      {{"--ps-url", "http://ps:9090", "--ps-metrics-url", "http://prom:9100/m"}, "http://prom:9100/m"},
  };
  for (const auto& c : cases) {
    auto r = parse(c.args);
    ASSERT_EQ(r.action, ConfigResult::Action::kRun) << r.message;
    EXPECT_EQ(ps_metrics_url(r.config), c.want);
  }
  auto bad = parse({"--ps-start-timeout", "soon"});
  EXPECT_EQ(bad.action, ConfigResult::Action::kError);
  EXPECT_NE(bad.message.find("ps-start-timeout"), std::string::npos) << bad.message;
  EXPECT_EQ(parse({}).config.ps_start_timeout_ms, 60'000u);
  EXPECT_EQ(parse({}).config.ps_check_interval_ms, 30'000u);
  EXPECT_EQ(parse({"--ps-check-interval", "0"}).config.ps_check_interval_ms, 0u);
  EXPECT_EQ(parse({"--ps-check-interval", "2.5"}).config.ps_check_interval_ms, 2'500u);
  EXPECT_EQ(parse({"--ps-check-interval", "-1"}).action, ConfigResult::Action::kError);
  EXPECT_EQ(parse({"--over-limit-reserve", "0"}).config.limits.over_limit_reserve, 0u);
  EXPECT_EQ(parse({"--over-limit-reserve", "-1"}).action, ConfigResult::Action::kError);
  EXPECT_EQ(parse({"--max-connections", "0"}).action, ConfigResult::Action::kError);
}

TEST(Config, DefaultsFollowTheSpec) {
  auto r = parse({});
  ASSERT_EQ(r.action, ConfigResult::Action::kRun) << r.message;
  const Config& c = r.config;
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 10200);
  EXPECT_EQ(c.store, "embedded:./data");
  EXPECT_EQ(c.ps_url, "http://127.0.0.1:10300");
  EXPECT_EQ(c.router_url, "http://127.0.0.1:8888");
  EXPECT_EQ(c.max_parallelism, 32);
  EXPECT_EQ(c.metrics_poll_interval_ms, 10'000u);
  EXPECT_EQ(c.recompute_interval_ms, 5'000u);
  EXPECT_FALSE(c.function_size);
  EXPECT_EQ(c.offer_ttl_ms, 5'000u);
  EXPECT_EQ(c.offer_linger_ttl_ms, 120'000u);
  EXPECT_EQ(c.reconcile_interval_ms, 300'000u);
  EXPECT_EQ(c.agent_timeout_ms, 30'000u);
  EXPECT_EQ(c.limits.max_body_bytes, 1024u * 1024u);
  EXPECT_TRUE(c.pack_etcd_values);
  EXPECT_EQ(c.ml_listen_host, "") << "no listener for KubeML alone unless asked";
}

TEST(Config, FlagsInBothFormsAndEnvironment) {
  auto r = parse({"--listen=0.0.0.0:9000", "--store", "etcd:http://127.0.0.1:2379,http://127.0.0.1:22379",
                  "--function-size", "0.5,512", "--metrics-poll-interval", "0", "--offer-ttl", "0.25"},
                 {{"UVSCHED_MAX_PARALLELISM", "8"}, {"UVSCHED_LISTEN", "1.2.3.4:1"}});
  ASSERT_EQ(r.action, ConfigResult::Action::kRun) << r.message;
  EXPECT_EQ(r.config.listen_host, "0.0.0.0");  // the flag beats the variable
  EXPECT_EQ(r.config.listen_port, 9000);
  EXPECT_EQ(r.config.max_parallelism, 8);
  EXPECT_EQ(r.config.store, "etcd:http://127.0.0.1:2379,http://127.0.0.1:22379");
  ASSERT_TRUE(r.config.function_size);
  EXPECT_EQ(r.config.function_size->cpus, 0.5);
  EXPECT_EQ(r.config.function_size->mem_mib, 512);
  EXPECT_EQ(r.config.metrics_poll_interval_ms, 0u);
  EXPECT_EQ(r.config.offer_ttl_ms, 250u);
  auto ml = parse({"--ml-listen", "10.0.0.5:10201"});
  ASSERT_EQ(ml.action, ConfigResult::Action::kRun) << ml.message;
  EXPECT_EQ(ml.config.ml_listen_host, "10.0.0.5");
  EXPECT_EQ(ml.config.ml_listen_port, 10201);
  EXPECT_FALSE(parse({"--etcd-values", "plain"}).config.pack_etcd_values);
  EXPECT_TRUE(parse({"--etcd-values=packed"}).config.pack_etcd_values);
}

TEST(Config, BadInputNamesTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"--listen", "nohost"}, "--listen"},
      {{"--listen"}, "needs a value"},
      {{"--ml-listen", "10201"}, "--ml-listen"},
      {{"--store", "redis:x"}, "--store"},
      {{"--store", "etcd:127.0.0.1:2379"}, "http://"},
      {{"--ps-url", "localhost:10300"}, "--ps-url"},
      {{"--max-parallelism", "0"}, "--max-parallelism"},
      {{"--offer-ttl", "-1"}, "--offer-ttl"},
      {{"--function-size", "1"}, "--function-size"},
      {{"--log-format", "xml"}, "--log-format"},
      {{"--etcd-values", "zip"}, "expects packed or plain"},
      {{"--whatever"}, "unknown flag --whatever"},
      {{"positional"}, "unexpected argument"},
  };
  for (const auto& c : cases) {
    auto r = parse(c.args);
    EXPECT_EQ(r.action, ConfigResult::Action::kError) << c.args[0];
    EXPECT_NE(r.message.find(c.says), std::string::npos) << r.message;
  }
  auto env = parse({}, {{"UVSCHED_AGENT_TIMEOUT", "soon"}});
  EXPECT_EQ(env.action, ConfigResult::Action::kError);
  EXPECT_NE(env.message.find("UVSCHED_AGENT_TIMEOUT"), std::string::npos);
}

TEST(Config, BooleanFlagsTakeNoValue) {
  auto r = parse({"--insecure-allow-remote", "--token-file", "/etc/uvsched/tokens"});
  ASSERT_EQ(r.action, ConfigResult::Action::kRun) << r.message;
  EXPECT_TRUE(r.config.insecure_allow_remote);
  EXPECT_EQ(r.config.token_file, "/etc/uvsched/tokens");
  // After a true from the environment, so that a false that was not read
  // (an error, or a default) cannot pass for one.
  auto off = parse({"--insecure-allow-remote=false"}, {{"UVSCHED_INSECURE_ALLOW_REMOTE", "1"}});
  ASSERT_EQ(off.action, ConfigResult::Action::kRun) << off.message;
  EXPECT_FALSE(off.config.insecure_allow_remote);
  auto on = parse({}, {{"UVSCHED_INSECURE_ALLOW_REMOTE", "1"}});
  ASSERT_EQ(on.action, ConfigResult::Action::kRun) << on.message;
  EXPECT_TRUE(on.config.insecure_allow_remote);
  EXPECT_EQ(parse({"--insecure-allow-remote=maybe"}).action, ConfigResult::Action::kError);
}

TEST(Config, HelpAndVersion) {
  EXPECT_EQ(parse({"--help"}).action, ConfigResult::Action::kHelp);
  EXPECT_EQ(parse({"--version"}).action, ConfigResult::Action::kVersion);
}

}  // namespace
}  // namespace uvsched
