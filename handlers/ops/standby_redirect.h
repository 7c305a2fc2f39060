// A standby hands every request to the leader (SPEC §8): 307 Temporary
// Redirect to the leader's URL with the same path and query, which Go clients
// such as KubeML's and kubectl follow with the body sent again; 503 with
// Retry-After while no leader is known. What a prober asks of this daemon
// itself (/health, /healthz, /readyz, /metrics, /v1/status) it answers itself.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "reactor/http_server.h"

namespace uvsched {

class StandbyRedirect final : public RequestHandler {
 public:
  // Empty: this daemon leads (or leads alone). Else the leader's base URL
  // ("http://host:port"), or nullopt inside when none is known.
  using LeaderView = std::function<std::optional<std::optional<std::string>>()>;

  explicit StandbyRedirect(RequestHandler& next) : next_(next) {}
  void set_leader_view(LeaderView view) { view_ = std::move(view); }
  void handle(HttpRequest& request, Responder responder) override;

 private:
  RequestHandler& next_;
  LeaderView view_;
};

// The leader record's value: {"id":IDENTITY,"url":ADVERTISE_URL}, and back.
std::string leader_record(const std::string& identity, const std::string& url);
std::optional<std::string> leader_record_url(const std::string& record);

}  // namespace uvsched
