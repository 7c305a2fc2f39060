#include "handlers/ops/standby_redirect.h"

#include <simdjson.h>

#include "handlers/json_response.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"

namespace uvsched {

StandbyRedirect::~StandbyRedirect() = default;

CounterFamily& standby_waits_counter(MetricsRegistry& metrics) {
  return metrics.counter("uvsched_standby_waits_total",
                         "Requests of callers that do not retry, held while no leader was known, by how it ended.");
}

void StandbyRedirect::wait_for_leader(Clock& clock, CounterFamily& waited, WaitRule rule) {
  clock_ = &clock;
  recheck_ = clock.new_timer();
  waited_ = &waited;
  rule_ = std::move(rule);
}

StandbyRedirect::Route StandbyRedirect::route(std::optional<std::optional<std::string>>* view) const {
  *view = view_ ? view_() : std::nullopt;
  if (!*view) return Route::kHere;
  return **view ? Route::kRedirect : Route::kLeaderless;
}

void StandbyRedirect::redirect(const HttpRequest& request, const std::string& leader, Responder& responder) {
  HttpResponse r = json_error(307, "this uvsched is a standby; the leader is " + leader);
  r.headers.push_back({"Location", leader + request.target});
  responder.send(std::move(r));
}

void StandbyRedirect::handle(HttpRequest& request, Responder responder) {
  std::string_view path = request.path();
  std::optional<std::optional<std::string>> view;
  Route to = route(&view);
  if (to == Route::kHere || path == "/health" || path == "/healthz" || path == "/readyz" || path == "/metrics" ||
      path == "/v1/status") {
    return next_.handle(request, std::move(responder));
  }
  if (to == Route::kRedirect) return redirect(request, **view, responder);
  if (rule_ && rule_->waits(path)) {
    if (waiting_.size() >= rule_->max_waiting) {
      waited_->add(labels({{"outcome", "full"}}));
      return next_.handle(request, std::move(responder));
    }
    waiting_.push_back({request, std::move(responder), clock_->now_ms() + rule_->wait_ms});
    if (!recheck_->active()) recheck_->start(rule_->recheck_ms, [this] { release(); });
    return;
  }
  HttpResponse r = json_error(503, "this uvsched is a standby and no leader is known yet; try again");
  r.headers.push_back({"Retry-After", "1"});
  responder.send(std::move(r));
}

// Hands on, in the order they came, the waiting requests a leader can now
// answer (or whose time is up); the others wait on.
void StandbyRedirect::release(bool all) {
  if (!rule_ || waiting_.empty()) return;
  std::optional<std::optional<std::string>> view;
  Route to = route(&view);
  bool serving = to == Route::kHere && (!rule_->serving || rule_->serving());
  uint64_t now = clock_->now_ms();
  std::deque<Waiting> batch;
  batch.swap(waiting_);
  for (auto& w : batch) {
    const char* outcome = nullptr;
    if (w.responder.peer_left()) {
      outcome = "gone";
    } else if (to == Route::kRedirect) {
      outcome = "redirected";
      redirect(w.request, **view, w.responder);
    } else if (serving || all || w.deadline_ms <= now) {
      outcome = serving ? "served" : (w.deadline_ms <= now ? "deadline" : "stopping");
      next_.handle(w.request, std::move(w.responder));
    }
    if (outcome) {
      waited_->add(labels({{"outcome", outcome}}));
      log_info("standby_wait_ended").kv("path", std::string(w.request.path())).kv("outcome", outcome);
    } else {
      waiting_.push_back(std::move(w));
    }
  }
  recheck_->stop();
  if (!waiting_.empty()) recheck_->start(rule_->recheck_ms, [this] { release(); });
}

std::string leader_record(const std::string& identity, const std::string& url, const std::string& ml_url) {
  JsonWriter w;
  w.begin_object().key("id").value(identity).key("url").value(url);
  if (!ml_url.empty()) w.key("ml_url").value(ml_url);
  w.end_object();
  return w.take();
}

namespace {
std::optional<std::string> record_field(const std::string& record, const char* field) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view url;
  if (parser.parse(record).get(doc) || doc[field].get(url) || url.empty()) return std::nullopt;
  return std::string(url);
}
}  // namespace

std::optional<std::string> leader_record_url(const std::string& record) { return record_field(record, "url"); }

std::optional<std::string> leader_record_ml_url(const std::string& record) { return record_field(record, "ml_url"); }

}  // namespace uvsched
