// A standby hands every request to the leader (SPEC §8): 307 Temporary
// Redirect to the leader's URL with the same path and query, which Go clients
// such as KubeML's and kubectl follow with the body sent again; 503 with
// Retry-After while no leader is known. What a prober asks of this daemon
// itself (/health, /healthz, /readyz, /metrics, /v1/status) it answers itself.
//
// Some callers never retry an error: a KubeML train job whose POST /job is
// answered 503 waits for its update forever. Requests of such paths wait
// instead, while no leader is known (the store stalled past the lease, and
// no one leads), for one: handed on once this daemon leads and serves again,
// redirected once another is known, and handed on as they are at the
// deadline (the handler then answers as a daemon that does not lead).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/ops/metrics_registry.h"
#include "reactor/clock.h"
#include "reactor/http_server.h"

namespace uvsched {

class StandbyRedirect final : public RequestHandler {
 public:
  // Empty: this daemon leads (or leads alone). Else the leader's base URL
  // ("http://host:port"), or nullopt inside when none is known.
  using LeaderView = std::function<std::optional<std::optional<std::string>>()>;

  struct WaitRule {
    std::function<bool(std::string_view path)> waits;  // the paths whose callers do not retry
    std::function<bool()> serving;                     // leading, are they answered well yet (loaded)?
    uint64_t wait_ms = 20'000;
    uint64_t recheck_ms = 200;  // a leader elsewhere is learnt by polling the view
    size_t max_waiting = 1024;  // beyond: handed on at once
  };

  explicit StandbyRedirect(RequestHandler& next) : next_(next) {}
  ~StandbyRedirect() override;
  void set_leader_view(LeaderView view) { view_ = std::move(view); }
  // `waited` counts them by outcome: standby_waits_counter's, which every
  // listener's redirect shares.
  void wait_for_leader(Clock& clock, CounterFamily& waited, WaitRule rule);
  // Leadership came or went: the waiting requests are looked at now.
  void leadership_changed() { release(); }
  // The daemon stops: every waiting request is handed on now, as at its deadline.
  void hand_on_all() { release(/*all=*/true); }
  void handle(HttpRequest& request, Responder responder) override;
  HttpResponse refusal(int status, std::string_view message, const HttpRequest& head) override {
    return next_.refusal(status, message, head);
  }
  size_t waiting() const { return waiting_.size(); }

 private:
  struct Waiting {
    HttpRequest request;
    Responder responder;
    uint64_t deadline_ms;
  };
  enum class Route { kHere, kRedirect, kLeaderless };
  Route route(std::optional<std::optional<std::string>>* view) const;
  void redirect(const HttpRequest& request, const std::string& leader, Responder& responder);
  void release(bool all = false);

  RequestHandler& next_;
  LeaderView view_;
  std::optional<WaitRule> rule_;
  Clock* clock_ = nullptr;
  std::unique_ptr<Timer> recheck_;
  std::deque<Waiting> waiting_;  // by deadline: all wait as long
  CounterFamily* waited_ = nullptr;
};

// uvsched_standby_waits_total, made once per registry.
CounterFamily& standby_waits_counter(MetricsRegistry& metrics);

// The leader record's value: {"id":IDENTITY,"url":ADVERTISE_URL}, with
// "ml_url" when the leader serves KubeML alone on --ml-listen; and back.
std::string leader_record(const std::string& identity, const std::string& url, const std::string& ml_url = "");
std::optional<std::string> leader_record_url(const std::string& record);
// nullopt as well for a record (a leader) without one.
std::optional<std::string> leader_record_ml_url(const std::string& record);

}  // namespace uvsched
