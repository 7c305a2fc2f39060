#include "handlers/agents/agent_hub.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "handlers/agents/agent_events.h"
#include "handlers/agents/agent_wire.h"
#include "handlers/json_body.h"
#include "handlers/json_response.h"
#include "handlers/pods/pod_validation.h"
#include "policy/quantity.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "reactor/secure_random.h"
#include "storage/base64.h"

namespace uvsched {
namespace {

HttpResponse bad(std::string_view message, std::string_view field = {}) { return json_error(400, message, field); }

std::string state_name(OfferRegistry::State s) {
  switch (s) {
    case OfferRegistry::State::kLive:
      return "live";
    case OfferRegistry::State::kClaimed:
      return "claimed";
    case OfferRegistry::State::kExpired:
      return "expired";
  }
  return "?";
}

void write_resources(JsonWriter& w, const Resources& r) {
  w.begin_array();
  w.begin_object().key("name").value("cpus").key("type").value("SCALAR");
  w.key("scalar").begin_object().key("value").value(r.cpus).end_object().end_object();
  w.begin_object().key("name").value("mem").key("type").value("SCALAR");
  w.key("scalar").begin_object().key("value").value(r.mem_mib).end_object().end_object();
  if (!r.ports.empty()) {
    w.begin_object().key("name").value("ports").key("type").value("RANGES").key("ranges").begin_object();
    w.key("range").begin_array();
    for (const auto& p : r.ports) {
      w.begin_object()
          .key("begin")
          .value(static_cast<uint64_t>(p.begin))
          .key("end")
          .value(static_cast<uint64_t>(p.end))
          .end_object();
    }
    w.end_array().end_object().end_object();
  }
  w.end_array();
}

}  // namespace

AgentHub::AgentHub(Clock& clock, MetricsRegistry& metrics, Settings settings)
    : clock_(clock),
      settings_(settings),
      offers_({settings.offer_ttl_ms, settings.offer_linger_ms}),
      offer_timer_(clock.new_timer()),
      heartbeat_timer_(clock.new_timer()),
      offer_events_(metrics.counter("uvsched_offer_events_total", "Offers by what happened to them.")),
      agent_events_(metrics.counter("uvsched_agent_events_total", "Agent subscriptions, losses and messages.")),
      refusals_(metrics.counter("uvsched_agent_refusals_total",
                                "Requests refused because an agent acted on another agent's task or offer, by what.")) {
  metrics.gauge("uvsched_offers_live", "Offers live and unclaimed.",
                [this](const GaugeEmit& emit) { emit("", static_cast<double>(offers_.live_count())); });
  metrics.gauge("uvsched_agents_connected", "Agents with an open event stream.", [this](const GaugeEmit& emit) {
    double n = 0;
    for (const auto& [h, a] : agents_) n += a->connected ? 1 : 0;
    emit("", n);
  });
  heartbeat_timer_->start(settings_.heartbeat_ms, [this] { heartbeat(); });
}

AgentHub::~AgentHub() = default;

void AgentHub::stop() {
  stopped_ = true;
  offer_timer_->stop();
  heartbeat_timer_->stop();
  for (auto& [h, a] : agents_) a->lost_timer.reset();
}

void AgentHub::drop_all() {
  AgentMap agents;
  agents.swap(agents_);  // the streams' close callbacks find no agent
  for (auto& [host, a] : agents) {
    a->lost_timer.reset();
    if (a->channel && a->channel->open()) a->channel->end();
  }
  offers_ = OfferRegistry({settings_.offer_ttl_ms, settings_.offer_linger_ms});
  recently_lost_.clear();
  ++nodes_version_;
  log_info("agents_dropped").kv("agents", static_cast<uint64_t>(agents.size())).kv("why", "no longer the leader");
}

void AgentHub::add_routes(Router& router) {
  router.add("POST", "/v1/agents/{host}/subscribe", [this](RequestContext& ctx) { subscribe(ctx); });
  router.add("POST", "/v1/agents/{host}/offers", [this](RequestContext& ctx) { post_offers(ctx); });
  router.add("DELETE", "/v1/agents/{host}/offers/{id}", [this](RequestContext& ctx) { rescind(ctx); });
  router.add("POST", "/v1/agents/{host}/status", [this](RequestContext& ctx) { post_status(ctx); });
  router.add("POST", "/v1/agents/{host}/message", [this](RequestContext& ctx) { post_message(ctx); });
  router.add("POST", "/v1/agents/{host}/executor-lost", [this](RequestContext& ctx) { post_executor_lost(ctx); });
  router.add("GET", "/v1/agents", [this](RequestContext& ctx) { list_agents(ctx); });
  router.add("GET", "/v1/agents/{host}", [this](RequestContext& ctx) { get_agent(ctx); });
  // The operator's MESSAGE to an agent's executor: outside /v1/agents/{host}/,
  // so an agent's own token cannot send it (admin only).
  router.add("POST", "/v1/messages/{host}", [this](RequestContext& ctx) { send_message(ctx); });
  router.add("GET", "/v1/offers", [this](RequestContext& ctx) { list_offers(ctx); });
}

const AgentHub::Agent* AgentHub::agent(const std::string& hostname) const {
  auto it = agents_.find(hostname);
  return it == agents_.end() ? nullptr : it->second.get();
}

bool AgentHub::send(const std::string& hostname, const std::string& json_line) {
  auto it = agents_.find(hostname);
  if (it == agents_.end() || !it->second->connected) return false;
  return it->second->channel->write({json_line, "\n"});
}

void AgentHub::expect(const std::string& hostname) {
  auto& slot = agents_[hostname];
  if (slot) return;
  slot = std::make_unique<Agent>();
  slot->hostname = hostname;
  slot->subscribed_unix_ms = clock_.unix_ms();
  slot->ready_since_unix_ms = clock_.unix_ms();
  ++nodes_version_;
  slot->lost_timer = clock_.new_timer();
  slot->lost_timer->start(settings_.agent_timeout_ms, [this, hostname] { lose(hostname); });
  log_info("agent_expected").kv("agent", hostname).kv("timeout_ms", settings_.agent_timeout_ms);
}

void AgentHub::subscribe(RequestContext& ctx) {
  std::string host = ctx.param("host");
  simdjson::dom::object body;
  if (auto e = parse_json_object(parser_, ctx.request.body.empty() ? "{}" : ctx.request.body, &body)) {
    return ctx.reply(bad(e->message, e->field));
  }
  Labels agent_labels;
  Resources total;
  std::string their_framework;
  if (auto e = read_subscription(body, &agent_labels, &total, &their_framework))
    return ctx.reply(bad(e->message, e->field));
  // The agent's name is its Node's, as a kubelet's hostname is (lowercased):
  // a DNS subdomain. Any other (a/b, a space, a NUL) would make a node no
  // kubectl command can name, and it keys the agent's tasks and records.
  if (!is_dns1123_subdomain(host)) {
    refusals_.add(labels({{"what", "agent_name"}}));
    return ctx.reply(bad("agent name '" + host +
                             "' must be a lowercase RFC 1123 subdomain, as a Node's name is: at most 253 of a-z, "
                             "0-9, '-' and '.', starting and ending with a letter or digit",
                         "host"));
  }
  // Its labels are its Node's, for nodeSelector and node affinity, and checked as the API server checks them.
  for (const auto& [key, value] : agent_labels) {
    std::vector<std::string> errors = qualified_name_errors(key);
    for (auto& e : label_value_errors(value)) errors.push_back(std::move(e));
    if (!errors.empty()) return ctx.reply(bad("label '" + key + "': " + errors.front(), "labels"));
  }
  subscribe_on(host, std::move(agent_labels), total, their_framework,
               stream_channel(ctx.responder.start_stream(200, "application/x-ndjson")));
}

void AgentHub::subscribe_on(const std::string& host, Labels agent_labels, Resources total,
                            const std::string& their_framework, std::shared_ptr<AgentChannel> channel) {
  std::erase_if(recently_lost_, [&host](const LostAgent& l) { return l.hostname == host; });
  auto& slot = agents_[host];
  bool known = slot != nullptr;
  bool reregistered = known && (slot->connected || slot->lost_timer);
  if (!slot) {
    slot = std::make_unique<Agent>();
    slot->hostname = host;
  }
  if (slot->agent_id.empty())
    slot->agent_id = host + "-" + std::to_string(clock_.unix_ms());  // (an expected one has none yet)
  Agent& a = *slot;
  if (a.connected) a.channel->end();  // a second subscribe replaces the first stream
  a.lost_timer.reset();
  a.own_labels = std::move(agent_labels);
  relabel(a);
  a.total = total;
  a.subscribed_unix_ms = clock_.unix_ms();
  a.ready_since_unix_ms = a.renewed_unix_ms = clock_.unix_ms();
  a.channel = std::move(channel);
  a.connected = true;
  ++nodes_version_;
  a.channel->on_close([this, host] { disconnected(host); });
  JsonWriter w;
  w.begin_object()
      .key("type")
      .value("SUBSCRIBED")
      .key("agent_id")
      .begin_object()
      .key("value")
      .value(a.agent_id)
      .end_object();
  if (std::string fid = events_ ? events_->framework_id() : ""; !fid.empty()) {
    w.key("framework_id").begin_object().key("value").value(fid).end_object();
  }
  w.key("heartbeat_interval_seconds").value(static_cast<double>(settings_.heartbeat_ms) / 1000).end_object();
  a.channel->write(w.take() + "\n");
  // Tasks launched for a framework that failed over past its timeout are
  // that framework's no more: the agent is told to shut them down, as a
  // Mesos agent does a removed framework's executors.
  if (std::string ours = events_ ? events_->framework_id() : "";
      !their_framework.empty() && !ours.empty() && their_framework != ours) {
    JsonWriter s;
    s.begin_object().key("type").value("SHUTDOWN_FRAMEWORK");
    s.key("framework_id").begin_object().key("value").value(their_framework).end_object().end_object();
    a.channel->write(s.take() + "\n");
    agent_events_.add(labels({{"event", "framework_shutdown"}}));
    log_warn("stale_framework_shut_down").kv("agent", host).kv("framework_id", their_framework).kv("current", ours);
  }
  agent_events_.add(labels({{"event", reregistered ? "reregistered" : "registered"}}));
  log_info(reregistered ? "agent_reregistered" : "agent_registered").kv("agent", host);
  if (events_) events_->agent_registered(host, reregistered);
}

void AgentHub::disconnected(const std::string& hostname) {
  auto it = agents_.find(hostname);
  if (it == agents_.end()) return;
  Agent& a = *it->second;
  if (a.channel && a.channel->open()) return;  // a newer stream replaced this one
  a.connected = false;
  a.ready_since_unix_ms = clock_.unix_ms();
  ++nodes_version_;
  // The stopping daemon closed it: no agent went away, and nothing may fire
  // into a scheduler that has stopped.
  if (stopped_) return;
  log_warn("agent_disconnected").kv("agent", hostname).kv("timeout_ms", settings_.agent_timeout_ms);
  a.lost_timer = clock_.new_timer();
  a.lost_timer->start(settings_.agent_timeout_ms, [this, hostname] { lose(hostname); });
}

void AgentHub::lose(const std::string& hostname) {
  auto it = agents_.find(hostname);
  if (it == agents_.end() || it->second->connected) return;
  log_warn("agent_lost").kv("agent", hostname);
  agent_events_.add(labels({{"event", "lost"}}));
  offers_.invalidate_agent(hostname, clock_.now_ms());
  agents_.erase(it);  // SlaveLost: it must subscribe afresh
  ++nodes_version_;
  if (recently_lost_.size() == kLostKept) recently_lost_.pop_front();
  recently_lost_.push_back({hostname, clock_.unix_ms()});
  if (events_) events_->agent_lost(hostname);
}

void AgentHub::post_offers(RequestContext& ctx) {
  std::string host = ctx.param("host");
  auto it = agents_.find(host);
  if (it == agents_.end() || !it->second->connected) {
    return ctx.reply(json_error(409, "agent " + host + " is not subscribed; subscribe first", "host"));
  }
  simdjson::dom::object body;
  std::vector<Offer> parsed;
  if (auto e = parse_json_object(parser_, ctx.request.body, &body)) return ctx.reply(bad(e->message, e->field));
  if (auto e = read_offers(body, host, &parsed)) return ctx.reply(bad(e->message, e->field));
  uint64_t now = clock_.now_ms();
  // Offer ids are the daemon's: HOST-o and 48 unpredictable bits, so no agent
  // can guess (and squat) another's next id. An id an agent gives must start
  // with its own host name. The batch is taken whole or not at all.
  std::set<std::string> batch;
  for (size_t i = 0; i < parsed.size(); ++i) {
    Offer& o = parsed[i];
    std::string field = "offers[" + std::to_string(i) + "].id.value";
    if (o.id.empty()) {
      char suffix[16];
      snprintf(suffix, sizeof suffix, "%012llx", static_cast<unsigned long long>(secure_random_u64() >> 16));
      o.id = host + "-o" + suffix;
    } else if (o.id.rfind(host + "-", 0) != 0) {
      refusals_.add(labels({{"what", "offer_id"}}));
      log_warn("agent_refused").kv("agent", host).kv("what", "offer id of another agent").kv("offer", o.id);
      return ctx.reply(json_error(400, "an offer id from agent " + host + " must start with '" + host + "-'", field));
    }
    if (offers_.state(o.id) || !batch.insert(o.id).second) {
      return ctx.reply(
          json_error(409, "offer id " + o.id + " is already known; no offer of this batch was taken", field));
    }
  }
  std::vector<std::string> ids;
  JsonWriter w;
  w.begin_object().key("offer_ids").begin_array();
  for (auto& o : parsed) {
    std::string id = o.id;
    offers_.add(std::move(o), now);  // cannot clash: checked above
    offer_events_.add(labels({{"event", "offered"}}));
    ids.push_back(id);
    w.begin_object().key("value").value(id).end_object();
  }
  w.end_array().end_object();
  ctx.reply(json_response(200, w.take()));
  tick_offers();
  if (events_ && !ids.empty()) events_->offers_arrived(ids);
}

void AgentHub::rescind(RequestContext& ctx) {
  std::string id = ctx.param("id");
  const std::string& host = ctx.param("host");
  if (!offers_.state(id)) return ctx.reply(json_error(404, "no offer " + id, "id"));
  const std::string* owner = offers_.agent_of(id);
  if (owner && *owner != host) {
    refusals_.add(labels({{"what", "rescind"}}));
    log_warn("agent_refused").kv("agent", host).kv("what", "rescind of another agent's offer").kv("offer", id);
    return ctx.reply(json_error(403, "offer " + id + " is not agent " + host + "'s", "id"));
  }
  offers_.rescind(id, clock_.now_ms());
  offer_events_.add(labels({{"event", "rescinded"}}));
  ctx.reply(json_response(200, "{}"));
  tick_offers();
}

void AgentHub::post_status(RequestContext& ctx) {
  std::string host = ctx.param("host");
  simdjson::dom::object body;
  std::vector<TaskStatus> statuses;
  if (auto e = parse_json_object(parser_, ctx.request.body, &body)) return ctx.reply(bad(e->message, e->field));
  if (auto e = read_statuses(body, &statuses)) return ctx.reply(bad(e->message, e->field));
  if (events_ && !events_->ready()) {
    HttpResponse r = json_error(503, "the scheduler is loading its pods; report these statuses again");
    r.headers.push_back({"Retry-After", "1"});
    return ctx.reply(std::move(r));
  }
  // An agent reports only on its own tasks; a batch with another's is refused whole.
  for (size_t i = 0; events_ && i < statuses.size(); ++i) {
    if (auto why = events_->refuse_status(host, statuses[i])) {
      refusals_.add(labels({{"what", "status"}}));
      log_warn("agent_refused")
          .kv("agent", host)
          .kv("what", "status of another agent's task")
          .kv("task", statuses[i].task_id);
      return ctx.reply(json_error(403, *why, "statuses[" + std::to_string(i) + "].task_id.value"));
    }
  }
  ctx.reply(json_response(200, "{}"));
  if (events_) {
    for (const auto& st : statuses) events_->status_update(host, st);
  }
}

// The agent the request's {host} names, or null once a 404 is answered:
// messages, losses and pages are for agents that subscribed.
AgentHub::Agent* AgentHub::subscribed_or_404(RequestContext& ctx) {
  auto it = agents_.find(ctx.param("host"));
  if (it != agents_.end()) return it->second.get();
  ctx.reply(json_error(404, "agent " + ctx.param("host") + " has not subscribed"));
  return nullptr;
}

void AgentHub::post_message(RequestContext& ctx) {
  simdjson::dom::object body;
  FrameworkMessage m;
  if (auto e = parse_json_object(parser_, ctx.request.body, &body)) return ctx.reply(bad(e->message, e->field));
  if (auto e = read_framework_message(body, &m)) return ctx.reply(bad(e->message, e->field));
  Agent* agent = subscribed_or_404(ctx);
  if (agent == nullptr) return;
  agent_events_.add(labels({{"event", "framework_message"}}));
  log_info("framework_message")
      .kv("agent", ctx.param("host"))
      .kv("executor", m.executor_id)
      .kv("bytes", static_cast<uint64_t>(m.data.size()));
  constexpr size_t kKept = 8, kKeptBytes = 1024;
  auto& kept = agent->messages;
  kept.push_back({m.executor_id, m.data.substr(0, kKeptBytes), m.data.size(), clock_.unix_ms()});
  if (kept.size() > kKept) kept.erase(kept.begin());
  ctx.reply(json_response(200, "{}"));
}

void AgentHub::send_message(RequestContext& ctx) {
  simdjson::dom::object body;
  FrameworkMessage m;
  if (auto e = parse_json_object(parser_, ctx.request.body, &body)) return ctx.reply(bad(e->message, e->field));
  if (auto e = read_framework_message(body, &m)) return ctx.reply(bad(e->message, e->field));
  std::string host = ctx.param("host");
  if (subscribed_or_404(ctx) == nullptr) return;
  JsonWriter w;
  w.begin_object().key("type").value("MESSAGE");
  w.key("executor_id").begin_object().key("value").value(m.executor_id).end_object();
  w.key("data").value(base64_encode(m.data)).end_object();
  if (!send(host, w.take())) {
    HttpResponse r = json_error(503, "agent " + host + " is not connected; send it again once it is");
    r.headers.push_back({"Retry-After", "1"});
    return ctx.reply(std::move(r));
  }
  agent_events_.add(labels({{"event", "message_sent"}}));
  ctx.reply(json_response(200, "{}"));
}

void AgentHub::post_executor_lost(RequestContext& ctx) {
  simdjson::dom::object body;
  ExecutorLost lost;
  if (auto e = parse_json_object(parser_, ctx.request.body, &body)) return ctx.reply(bad(e->message, e->field));
  if (auto e = read_executor_lost(body, &lost)) return ctx.reply(bad(e->message, e->field));
  std::string host = ctx.param("host");
  Agent* agent = subscribed_or_404(ctx);
  if (agent == nullptr) return;
  agent_events_.add(labels({{"event", "executor_lost"}}));
  log_warn("executor_lost").kv("agent", host).kv("executor", lost.executor_id).kv("status", lost.status);
  auto& kept = agent->executor_losses;
  kept.push_back({lost.executor_id, lost.status, clock_.unix_ms()});
  if (kept.size() > 8) kept.erase(kept.begin());
  ctx.reply(json_response(200, "{}"));
  // Its tasks may have gone with it: the agent is asked about them at once.
  if (events_) events_->executor_lost(host);
}

void AgentHub::get_agent(RequestContext& ctx) {
  const Agent* found = subscribed_or_404(ctx);
  if (found == nullptr) return;
  const Agent& a = *found;
  JsonWriter w;
  w.begin_object()
      .key("hostname")
      .value(a.hostname)
      .key("agent_id")
      .value(a.agent_id)
      .key("connected")
      .value(a.connected)
      .key("cordoned")
      .value(cordoned(a.hostname));
  w.key("labels").begin_object();
  for (const auto& [k, v] : a.labels) {
    if (k != kHostnameLabel) w.key(k).value(v);  // (the hostname, shown already)
  }
  w.end_object().key("resources");
  write_resources(w, a.total);
  w.key("messages").begin_array();
  for (const auto& m : a.messages) {
    w.begin_object().key("executor_id").value(m.executor_id).key("data").value(base64_encode(m.data));
    w.key("bytes").value(static_cast<uint64_t>(m.bytes)).key("truncated").value(m.bytes > m.data.size());
    w.key("time").value(rfc3339(m.unix_ms)).end_object();
  }
  w.end_array().key("executor_losses").begin_array();
  for (const auto& l : a.executor_losses) {
    w.begin_object().key("executor_id").value(l.executor_id).key("status").value(l.status);
    w.key("time").value(rfc3339(l.unix_ms)).end_object();
  }
  w.end_array().end_object();
  ctx.reply(json_response(200, w.take()));
}

std::vector<const AgentHub::Agent*> AgentHub::sorted_agents() const {
  std::vector<const Agent*> out;
  out.reserve(agents_.size());
  for (const auto& [host, a] : agents_) out.push_back(a.get());
  std::sort(out.begin(), out.end(), [](const Agent* x, const Agent* y) { return x->hostname < y->hostname; });
  return out;
}

void AgentHub::list_agents(RequestContext& ctx) {
  JsonWriter w;
  w.begin_object().key("agents").begin_array();
  for (const Agent* a : sorted_agents()) {
    w.begin_object()
        .key("hostname")
        .value(a->hostname)
        .key("agent_id")
        .value(a->agent_id)
        .key("connected")
        .value(a->connected)
        .key("cordoned")
        .value(cordoned(a->hostname));
    w.key("labels").begin_object();
    for (const auto& [k, v] : a->labels) w.key(k).value(v);
    w.end_object().key("resources");
    write_resources(w, a->total);
    w.end_object();
  }
  w.end_array().end_object();
  ctx.reply(json_response(200, w.take()));
}

void AgentHub::list_offers(RequestContext& ctx) {
  JsonWriter w;
  w.begin_object().key("offers").begin_array();
  for (const auto& [o, state] : offers_.all()) {
    w.begin_object().key("id").begin_object().key("value").value(o->id).end_object();
    w.key("agent").value(o->agent).key("state").value(state_name(state)).key("resources");
    write_resources(w, o->resources);
    w.end_object();
  }
  w.end_array().end_object();
  ctx.reply(json_response(200, w.take()));
}

void AgentHub::release_offer(const std::string& id) {
  uint64_t now = clock_.now_ms();
  offers_.release(id, now);
  arm_offer_timer(now);
}

// Keeps one timer at the registry's next deadline (its earliest of all).
void AgentHub::arm_offer_timer(uint64_t now) {
  if (auto next = offers_.next_deadline()) {
    offer_timer_->start(*next > now ? *next - now : 0, [this] { tick_offers(); });
  }
}

void AgentHub::tick_offers() {
  uint64_t now = clock_.now_ms();
  // The agent hears of its offers that went unused, one DECLINE each tick,
  // and offers those resources again after the filter (as a Mesos master
  // would offer them again): they never just vanish from its view.
  std::map<std::string, std::vector<std::string>> by_agent;
  for (const auto& d : offers_.tick(now)) {
    offer_events_.add(labels({{"event", "declined"}}));
    log_debug("offer_declined").kv("offer", d.id).kv("agent", d.agent);
    by_agent[d.agent].push_back(d.id);
  }
  for (const auto& [agent, ids] : by_agent) send(agent, decline_event(ids));
  arm_offer_timer(now);
}

void AgentHub::heartbeat() {
  for (auto& [host, a] : agents_) {
    if (a->connected && a->channel->write("{\"type\":\"HEARTBEAT\"}\n")) a->renewed_unix_ms = clock_.unix_ms();
  }
  heartbeat_timer_->start(settings_.heartbeat_ms, [this] { heartbeat(); });
}

std::string AgentHub::ready_message(const Agent& a) const {
  if (a.connected) return "the agent is subscribed";
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "--agent-timeout (%gs)",
                static_cast<double>(settings_.agent_timeout_ms) / 1000);
  // An agent expected after a takeover has had no stream with this daemon.
  if (!a.channel)
    return std::string("waiting for the agent, which runs tasks, to subscribe to this daemon within ") + timeout;
  return std::string("the agent's event stream closed; it is lost unless it subscribes again within ") + timeout;
}

std::vector<JsonValue> AgentHub::nodes() const {
  std::vector<JsonValue> out;
  for (const Agent* a : sorted_agents()) {
    const std::string& host = a->hostname;
    JsonWriter w;
    w.begin_object().key("kind").value("Node").key("apiVersion").value("v1");
    w.key("metadata").begin_object().key("name").value(host).key("uid").value(a->agent_id);
    w.key("creationTimestamp").value(rfc3339(a->subscribed_unix_ms)).key("labels").begin_object();
    for (const auto& [k, v] : a->labels) {
      if (k != kHostnameLabel) w.key(k).value(v);  // (written once, below: it is the hostname)
    }
    w.key(kHostnameLabel).value(host).end_object().end_object();
    const std::vector<Taint>& own_taints = taints(host);
    if (cordoned(host) || !own_taints.empty()) {
      w.key("spec").begin_object();
      if (cordoned(host)) w.key("unschedulable").value(true);
      w.key("taints").begin_array();
      if (cordoned(host)) {
        // As the node lifecycle controller marks a cordoned node, for tools that read taints.
        w.begin_object().key("key").value(kUnschedulableTaint).key("effect").value("NoSchedule").end_object();
      }
      for (const Taint& t : own_taints) {
        w.begin_object().key("key").value(t.key);
        if (!t.value.empty()) w.key("value").value(t.value);
        w.key("effect").value(t.effect);
        if (!t.time_added.empty()) w.key("timeAdded").value(t.time_added);
        w.end_object();
      }
      w.end_array().end_object();
    }
    w.key("status").begin_object();
    w.key("addresses").begin_array();
    w.begin_object().key("type").value("Hostname").key("address").value(host).end_object().end_array();
    for (const char* which : {"capacity", "allocatable"}) {
      w.key(which).begin_object().key("cpu").value(format_quantity_milli(std::llround(a->total.cpus * 1000)));
      w.key("memory").value(std::to_string(static_cast<int64_t>(a->total.mem_mib)) + "Mi").end_object();
    }
    // The heartbeat is the Lease's (node_leases): the condition's time is
    // when it last changed, so a node changes only when nodes_version does.
    std::string since = rfc3339(a->ready_since_unix_ms);
    w.key("conditions").begin_array().begin_object().key("type").value("Ready");
    w.key("status").value(a->connected ? "True" : "Unknown");
    w.key("lastHeartbeatTime").value(since).key("lastTransitionTime").value(since);
    w.key("reason").value(a->connected ? "AgentConnected" : "AgentDisconnected");
    w.key("message").value(ready_message(*a));
    w.end_object().end_array().end_object().end_object();
    std::string error;
    if (auto v = JsonValue::parse(w.str(), &error)) out.push_back(std::move(*v));
  }
  return out;
}

namespace {
// A Lease's times are MicroTime: RFC 3339 with six fractional digits.
std::string rfc3339_micro(int64_t unix_ms) {
  std::string s = rfc3339(unix_ms);
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%03d000", static_cast<int>(unix_ms % 1000));
  return s.insert(s.size() - 1, fraction);
}
}  // namespace

JsonValue AgentHub::node_lease(const Agent& a) const {
  JsonWriter w;
  w.begin_object().key("kind").value("Lease").key("apiVersion").value("coordination.k8s.io/v1");
  w.key("metadata").begin_object().key("name").value(a.hostname).key("namespace").value("kube-node-lease");
  w.key("creationTimestamp").value(rfc3339(a.subscribed_unix_ms));
  if (!a.agent_id.empty()) {  // (an expected agent has none yet: nor has its node)
    w.key("uid").value(a.agent_id + "-lease").key("ownerReferences").begin_array().begin_object();
    w.key("apiVersion").value("v1").key("kind").value("Node").key("name").value(a.hostname);
    w.key("uid").value(a.agent_id).end_object().end_array();
  }
  w.end_object();
  w.key("spec").begin_object().key("holderIdentity").value(a.hostname);
  w.key("leaseDurationSeconds").value(static_cast<int64_t>((settings_.agent_timeout_ms + 999) / 1000));
  if (a.renewed_unix_ms > 0) w.key("renewTime").value(rfc3339_micro(a.renewed_unix_ms));
  w.end_object().end_object();
  std::string error;
  return JsonValue::parse(w.str(), &error).value_or(JsonValue::object());
}

std::vector<JsonValue> AgentHub::node_leases() const {
  std::vector<JsonValue> out;
  for (const Agent* a : sorted_agents()) out.push_back(node_lease(*a));
  return out;
}

std::optional<JsonValue> AgentHub::node_lease(const std::string& hostname) const {
  const Agent* a = agent(hostname);
  if (!a) return std::nullopt;
  return node_lease(*a);
}

void AgentHub::relabel(Agent& a) const {
  auto edits = label_edits_.find(a.hostname);
  a.labels = edits == label_edits_.end() ? a.own_labels : with_edits(a.own_labels, edits->second);
  // Every node has this label, as a kubelet sets it: nodeSelectors, node
  // affinity and inter-pod terms (topologyKey) name it.
  a.labels[kHostnameLabel] = a.hostname;
}

void AgentHub::set_label_edits(const std::string& hostname, LabelEdits edits) {
  if (edits.empty()) {
    label_edits_.erase(hostname);
  } else {
    label_edits_[hostname] = std::move(edits);
  }
  if (auto it = agents_.find(hostname); it != agents_.end()) relabel(*it->second);
  ++nodes_version_;
}

void AgentHub::replace_label_edits(std::map<std::string, LabelEdits> all) {
  label_edits_ = std::move(all);
  for (auto& [host, a] : agents_) relabel(*a);
  ++nodes_version_;
}

const std::vector<Taint>& AgentHub::taints(const std::string& hostname) const {
  static const std::vector<Taint> kNone;
  auto it = taints_.find(hostname);
  return it == taints_.end() ? kNone : it->second;
}

namespace {
size_t preferences_in(const std::vector<Taint>& taints) {
  return static_cast<size_t>(
      std::count_if(taints.begin(), taints.end(), [](const Taint& t) { return t.effect == "PreferNoSchedule"; }));
}
}  // namespace

void AgentHub::set_taints(const std::string& hostname, std::vector<Taint> taints) {
  preferences_ -= preferences_in(this->taints(hostname));
  preferences_ += preferences_in(taints);
  if (taints.empty()) {
    taints_.erase(hostname);
  } else {
    taints_[hostname] = std::move(taints);
  }
  ++nodes_version_;
}

void AgentHub::replace_taints(std::map<std::string, std::vector<Taint>> all) {
  taints_ = std::move(all);
  preferences_ = 0;
  for (const auto& [host, taints] : taints_) preferences_ += preferences_in(taints);
  ++nodes_version_;
}

void AgentHub::set_cordoned(const std::string& hostname, bool on) {
  if (on) {
    cordoned_.insert(hostname);
  } else {
    cordoned_.erase(hostname);
  }
  ++nodes_version_;
}

}  // namespace uvsched
