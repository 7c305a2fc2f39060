// N simulated node agents in one process, on the reactor: each subscribes,
// offers its free resources (and offers again as they expire or free up),
// answers LAUNCH with TASK_STARTING + TASK_RUNNING (and TASK_FINISHED after
// --finish-after seconds, if set), KILL with TASK_KILLED, and RECONCILE as
// a Mesos master does (TASK_LOST for a task asked about that it does not know).
// With --pods M it is also the placement benchmark's driver: once every agent
// has offered, it creates M pods through the API (--concurrency at a time,
// sent --pipeline at a time back to back on one connection, the way an
// HTTP/2 client such as client-go multiplexes its requests) and reports pods
// placed per second and create-to-LAUNCH latency.
// With --agent-mux K, the posts that agents make in one loop turn (statuses
// and offers after a LAUNCH) share connections, K agents' posts back to back
// on each, the way a Mesos master relays many agents' updates to a framework
// over one connection; otherwise each agent's posts go on a connection alone.
// Agents are named PREFIX-0 .. PREFIX-(N-1) (--prefix, default sim), carry
// --labels (default sim=true) and offer --ports (default 31000-32000, a Mesos
// agent's default range) besides --cpus and --mem; a second simulator with
// another prefix adds agents to the same daemon.
// With several daemons (--server URL1,URL2,...) an agent behaves as SPEC §4
// asks of one: it subscribes to any, follows a standby's 307 to the leader,
// and when its stream ends subscribes again (the next URL after a refusal);
// its posts go where its stream is, and a status answered 503 (the leader is
// still loading) or 307 is sent again once it is subscribed to the leader.
//   agent_sim --server http://127.0.0.1:10200 --agents 1000 [--pods 10000]
#include <sys/resource.h>
#include <uv.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simdjson.h>

#include "handlers/agents/agent_events.h"
#include "handlers/pods/pod_validation.h"
#include "reactor/http_client.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/next_turn.h"
#include "reactor/url.h"
#include "storage/base64.h"

namespace {

using uvsched::PortRange;

struct Options {
  std::string server = "http://127.0.0.1:10200";
  std::string prefix = "sim";
  std::string labels_json = R"({"sim":"true"})";
  std::vector<PortRange> ports = {{31000, 32000}};
  int agents = 1000;
  double cpus = 4;
  double mem_mib = 8192;
  double finish_after_s = 0;
  double stop_after_s = 0;  // --stop-after: how long a killed task's process takes to stop
  int pods = 0;
  int concurrency = 64;
  int pipeline = 1;
  int agent_mux = 1;
  double reoffer_s = 4;  // inside the daemon's default 5 s offer TTL
  bool hold_statuses = false;
  bool pod_status = true;
  int gang_size = 0;       // --gang-size: the pods go in PodGroups of this many (minMember all of them)
  int high_pods = 0;       // --high-pods: once the pods are placed, this many more of a higher priority
  std::string events_log;  // a line per LAUNCH and KILL received, for drills that count them
};

// Written without JsonWriter: an agent offers after every LAUNCH, and the
// simulator shares the benchmark's cores with the daemon.
std::string resources(double cpus, double mem, const std::vector<PortRange>& ports) {
  std::string r;
  uvsched::append_resources(r, cpus, mem, ports);
  return r;
}

// What a LAUNCH gives its task, read from the event's head (everything before
// the pod), which the daemon writes in one fixed shape (agent_events): cheap
// next to a parse of the whole line, which the pod makes long.
struct TaskResources {
  double cpus = 0;
  double mem = 0;
  std::vector<uint32_t> ports;
  std::string running_data;  // TASK_RUNNING's `data` (--pod-status): the pod's status, base64
};

double number_after(std::string_view text, std::string_view key, size_t from) {
  size_t at = text.find(key, from);
  if (at == std::string_view::npos) return 0;
  double v = 0;
  std::from_chars(text.data() + at + key.size(), text.data() + text.size(), v);
  return v;
}

TaskResources task_resources(std::string_view line) {
  std::string_view head = line.substr(0, line.find(R"(,"pod":)"));
  TaskResources r;
  if (size_t at = head.find(R"("name":"cpus")"); at != std::string_view::npos)
    r.cpus = number_after(head, R"("value":)", at);
  if (size_t at = head.find(R"("name":"mem")"); at != std::string_view::npos)
    r.mem = number_after(head, R"("value":)", at);
  size_t at = head.find(R"("name":"ports")");
  while (at != std::string_view::npos && (at = head.find(R"("begin":)", at)) != std::string_view::npos) {
    auto begin = static_cast<uint32_t>(number_after(head, R"("begin":)", at));
    auto end = static_cast<uint32_t>(number_after(head, R"("end":)", at));
    for (uint32_t p = begin; p <= end && p >= begin; ++p) r.ports.push_back(p);
    ++at;
  }
  return r;
}

// The pod status an agent that runs the pod's containers reports with
// TASK_RUNNING (as the seed's executor does), so kubectl shows them ready:
// every container running and ready (none has a probe here to say
// otherwise), and the conditions that follow. Empty if the LAUNCH is not
// readable.
std::string running_pod_status(simdjson::dom::parser& parser, std::string_view launch, const std::string& now) {
  simdjson::dom::element event;
  simdjson::dom::array containers;
  if (parser.parse(launch.data(), launch.size()).get(event) != simdjson::SUCCESS ||
      event.at_pointer("/task/pod/spec/containers").get(containers) != simdjson::SUCCESS)
    return {};
  uvsched::JsonWriter w;
  w.begin_object().key("conditions").begin_array();
  for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    w.begin_object()
        .key("type")
        .value(type)
        .key("status")
        .value("True")
        .key("lastTransitionTime")
        .value(now)
        .end_object();
  }
  w.end_array().key("containerStatuses").begin_array();
  for (simdjson::dom::element c : containers) {
    std::string_view name, image;
    if (c["name"].get(name) != simdjson::SUCCESS) continue;
    if (c["image"].get(image) != simdjson::SUCCESS) image = {};
    w.begin_object().key("name").value(name).key("image").value(image).key("imageID").value("");
    w.key("ready").value(true).key("started").value(true).key("restartCount").value(0);
    w.key("state").begin_object().key("running").begin_object().key("startedAt").value(now).end_object().end_object();
    w.end_object();
  }
  w.end_array().end_object();
  return uvsched::base64_encode(w.take());
}

// An agent's free ports as sorted, disjoint ranges.
void take_port(std::vector<PortRange>& free, uint32_t port) {
  for (size_t i = 0; i < free.size(); ++i) {
    PortRange r = free[i];
    if (port < r.begin || port > r.end) continue;
    free.erase(free.begin() + static_cast<std::ptrdiff_t>(i));
    if (port < r.end) free.insert(free.begin() + static_cast<std::ptrdiff_t>(i), {port + 1, r.end});
    if (port > r.begin) free.insert(free.begin() + static_cast<std::ptrdiff_t>(i), {r.begin, port - 1});
    return;
  }
}

void give_port(std::vector<PortRange>& free, uint32_t port) {
  auto at = std::find_if(free.begin(), free.end(), [port](const PortRange& r) { return r.begin > port; });
  at = free.insert(at, {port, port});
  // Merge with the neighbours it now touches.
  if (at + 1 != free.end() && (at + 1)->begin == port + 1) {
    at->end = (at + 1)->end;
    free.erase(at + 1);
  }
  if (at != free.begin() && (at - 1)->end + 1 == port) {
    (at - 1)->end = at->end;
    free.erase(at);
  }
}

// Pulls a string field's value out of one event line (enough for our own
// events: the first field of that name, whose value is a string).
std::string_view field_after(std::string_view line, std::string_view key) {
  std::string quoted = "\"" + std::string(key) + "\":";
  size_t at = line.find(quoted);
  if (at == std::string_view::npos) return {};
  at = line.find('"', at + quoted.size());
  size_t end = at == std::string_view::npos ? at : line.find('"', at + 1);
  return end == std::string_view::npos ? std::string_view() : line.substr(at + 1, end - at - 1);
}

class Sim;

struct Agent {
  Sim* sim;
  std::string host;
  double free_cpus, free_mem;
  std::vector<PortRange> free_ports;
  std::map<std::string, TaskResources> tasks;
  // Tasks told to stop (--stop-after): each reported TASK_KILLING, and
  // TASK_KILLED when its timer fires; what they hold is freed then.
  std::map<std::string, std::unique_ptr<uvsched::Timer>> stopping;
  std::string buffer;
  bool offered = false;
  bool offering = false;
  std::string current_offer;  // rescinded before the next one, so resources are never offered twice
  std::string framework_id;   // as SUBSCRIBED named it
  std::unique_ptr<uvsched::Timer> reoffer;
  std::unique_ptr<uvsched::Timer> resubscribe;
  std::string base;   // the daemon its stream is on: scheme://host:port
  size_t server = 0;  // its place in --server's list
};

// scheme://host:port of an absolute URL ("" when it is not one).
std::string origin_of(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  size_t path = url.find('/', scheme + 3);
  return url.substr(0, path);
}

constexpr uint64_t kResubscribeMs = 200;

class Sim {
 public:
  Sim(uv_loop_t* loop, Options o)
      : clock_(loop),
        o_(std::move(o)),
        client_(loop, clock_,
                uvsched::ClientOptions{.max_connections_per_origin = static_cast<size_t>(o_.agents) + 256}),
        mux_turn_(loop, [this] { send_muxed(); }) {
    for (size_t from = 0; from <= o_.server.size();) {
      size_t comma = std::min(o_.server.find(',', from), o_.server.size());
      std::string url = o_.server.substr(from, comma - from);
      while (!url.empty() && url.back() == '/') url.pop_back();
      if (!url.empty()) servers_.push_back(url);
      from = comma + 1;
    }
  }

  void run() {
    if (!o_.events_log.empty()) {
      events_ = fopen(o_.events_log.c_str(), "a");
      if (events_) setvbuf(events_, nullptr, _IOLBF, 0);  // a reader sees each line as it comes
    }
    for (int i = 0; i < o_.agents; ++i) {
      auto a = std::make_unique<Agent>();
      a->sim = this;
      a->host = o_.prefix + "-" + std::to_string(i);
      a->free_cpus = o_.cpus;
      a->free_mem = o_.mem_mib;
      a->free_ports = o_.ports;
      a->reoffer = clock_.new_timer();
      a->resubscribe = clock_.new_timer();
      a->server = static_cast<size_t>(i) % servers_.size();
      a->base = servers_[a->server];
      subscribe(*a);
      agents_[a->host] = std::move(a);
    }
  }

  void subscribe(Agent& a) {
    uvsched::ClientRequest req;
    req.method = "POST";
    req.url = a.base + "/v1/agents/" + a.host + "/subscribe";
    req.body = R"({"labels":)" + o_.labels_json + R"(,"resources":)" + resources(o_.cpus, o_.mem_mib, o_.ports);
    // The framework its tasks were launched for, as SUBSCRIBED last said.
    if (!a.framework_id.empty()) req.body += R"(,"framework_id":{"value":")" + a.framework_id + "\"}";
    req.body += "}";
    req.timeout_ms = 0;
    Agent* ap = &a;
    req.on_body = [this, ap](std::string_view piece) {
      // Whole lines are handled where they lie; what is left of a line waits
      // for the next piece. (on_event does not touch the buffer: the stream
      // ending, which clears it, is reported later, not from in here.)
      ap->buffer.append(piece);
      std::string_view rest = ap->buffer;
      for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
        on_event(*ap, rest.substr(0, nl));
      }
      ap->buffer.erase(0, ap->buffer.size() - rest.size());
    };
    client_.request(std::move(req), [this, ap](uvsched::ClientResponse&& r) {
      ap->buffer.clear();
      const std::string* location = r.header("Location");
      if (r.error == 0 && r.status == 307 && location && !origin_of(*location).empty()) {
        ap->base = origin_of(*location);  // a standby names the leader: go there now
        return subscribe(*ap);
      }
      fprintf(stderr, "agent %s stream ended: %s; subscribing again\n", ap->host.c_str(),
              r.error ? r.error_text.c_str() : (r.status == 200 ? "closed" : std::to_string(r.status).c_str()));
      // As a real agent would: a stream lost (say, a connect that a full
      // accept queue reset) is re-opened, within the agent timeout, so the
      // daemon keeps its tasks and reconciles them. Its daemon gone or not
      // leading, it tries the next one it knows.
      if (r.error != 0 || r.status == 503 || r.status == 200) {
        ap->server = (ap->server + 1) % servers_.size();
        ap->base = servers_[ap->server];
      }
      ap->resubscribe->start(kResubscribeMs, [this, ap] { subscribe(*ap); });
    });
  }

  void on_event(Agent& a, std::string_view line) {
    std::string_view type = field_after(line.substr(0, 32), "type");  // the daemon writes it first
    if (type == "SUBSCRIBED") {
      if (size_t at = line.find("\"framework_id\":"); at != std::string_view::npos) {
        a.framework_id = std::string(field_after(line.substr(at), "value"));
      }
      offer(a);
    } else if (type == "SHUTDOWN_FRAMEWORK") {
      // Its tasks were another framework's, one that failed over too late:
      // they are stopped, and what they held is free to offer.
      if (events_)
        fprintf(events_, "SHUTDOWN_FRAMEWORK %s %s\n", a.host.c_str(), std::string(field_after(line, "value")).c_str());
      a.free_cpus = o_.cpus;
      a.free_mem = o_.mem_mib;
      a.free_ports = o_.ports;
      a.tasks.clear();
      a.stopping.clear();
      a.current_offer.clear();
      offer(a);
    } else if (type == "LAUNCH") {
      std::string id(field_after(line, "value"));
      std::string name(field_after(line, "name"));
      if (events_) fprintf(events_, "LAUNCH %s %s %s\n", a.host.c_str(), name.c_str(), id.c_str());
      TaskResources used = task_resources(line);
      if (o_.pod_status) used.running_data = running_pod_status(parser_, line, uvsched::rfc3339(clock_.unix_ms()));
      a.free_cpus -= used.cpus;
      a.free_mem -= used.mem;
      for (uint32_t p : used.ports) take_port(a.free_ports, p);
      a.tasks[id] = std::move(used);
      launched(name);
      a.current_offer.clear();  // a LAUNCH consumes the whole offer: nothing to rescind
      if (o_.finish_after_s > 0) {
        auto t = std::shared_ptr<uvsched::Timer>(clock_.new_timer());
        Agent* ap = &a;
        t->start(static_cast<uint64_t>(o_.finish_after_s * 1000),
                 [this, ap, id, t] { finish(*ap, id, "TASK_FINISHED"); });
      }
      // The task's statuses and an offer of what is left, back to back on one
      // connection (HTTP/1.1 pipelining), as an agent that has both ready would.
      std::vector<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> both;
      if (o_.hold_statuses && reporting_) {
        held_.emplace_back(&a, id);  // sent once the benchmark has reported
      } else {
        both.push_back(status_request(a, id, {"TASK_STARTING", "TASK_RUNNING"}));
      }
      if (auto o = offer_request(a)) both.push_back(std::move(*o));
      if (o_.agent_mux > 1) {
        for (auto& post : both) muxed_.push_back(std::move(post));
        if (!muxed_.empty()) mux_turn_.schedule();
      } else if (!both.empty()) {
        client_.pipeline(std::move(both));
      }
    } else if (type == "KILL") {
      std::string id(field_after(line, "value"));
      if (events_) fprintf(events_, "KILL %s %s\n", a.host.c_str(), id.c_str());
      kill(a, id, line);
    } else if (type == "RECONCILE") {
      reconcile(a, line);
    } else if (type == "DECLINE") {
      // Its offer went unused: the resources are its own again, offered anew
      // once the filter's refuse_seconds have passed.
      if (events_) fprintf(events_, "DECLINE %s %s\n", a.host.c_str(), std::string(field_after(line, "value")).c_str());
      if (line.find("\"" + a.current_offer + "\"") != std::string_view::npos) a.current_offer.clear();
      double refuse_s = 5;
      if (size_t at = line.find("\"refuse_seconds\":"); at != std::string_view::npos) {
        refuse_s = std::strtod(std::string(line.substr(at + 17, 16)).c_str(), nullptr);
      }
      fprintf(stderr, "agent %s: offer declined; offered again in %g s\n", a.host.c_str(), refuse_s);
      Agent* ap = &a;
      a.reoffer->start(static_cast<uint64_t>(std::max(0.0, refuse_s) * 1000), [this, ap] { offer(*ap); });
    }
  }

  // This turn's posts of many agents, --agent-mux agents' worth on each
  // connection (an agent's two posts stay together, in order).
  void send_muxed() {
    std::vector<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> all;
    all.swap(muxed_);
    size_t per_connection = static_cast<size_t>(o_.agent_mux) * 2;
    for (size_t at = 0; at < all.size(); at += per_connection) {
      std::vector<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> group;
      for (size_t i = at; i < std::min(all.size(), at + per_connection); ++i) group.push_back(std::move(all[i]));
      client_.pipeline(std::move(group));
    }
  }

  // As a Mesos master answers a framework's reconciliation: an empty list
  // (implicit) is every task it runs; an explicit one is each task asked
  // about, TASK_LOST for a task it does not know (this agent was started
  // afresh under the same name, or the LAUNCH never reached it).
  void reconcile(Agent& a, std::string_view line) {
    std::vector<std::string> asked;
    simdjson::dom::element doc;
    simdjson::dom::array tasks;
    if (parser_.parse(line.data(), line.size()).get(doc) == simdjson::SUCCESS &&
        doc["tasks"].get(tasks) == simdjson::SUCCESS) {
      for (auto t : tasks) {
        std::string_view id;
        if (t["task_id"]["value"].get(id) == simdjson::SUCCESS) asked.emplace_back(id);
      }
    }
    auto state_of = [&a](const std::string& id) {
      if (a.tasks.count(id) == 0) return "TASK_LOST";
      return a.stopping.count(id) != 0 ? "TASK_KILLING" : "TASK_RUNNING";
    };
    if (asked.empty()) {
      for (const auto& [id, res] : a.tasks) status(a, id, state_of(id));
      return;
    }
    for (const auto& id : asked) {
      const char* state = state_of(id);
      if (std::string_view(state) == "TASK_LOST" && events_)
        fprintf(events_, "RECONCILE_LOST %s %s\n", a.host.c_str(), id.c_str());
      status(a, id, state);
    }
  }

  // As a Mesos executor kills a task: SIGTERM, TASK_KILLING, and TASK_KILLED
  // once the process has exited (--stop-after) or, at the latest, when the
  // KILL's grace period ends (SIGKILL); Mesos' 3 s when it gives none. A
  // KILL for a task already stopping changes nothing (SIGTERM went once).
  // Without --stop-after, processes stop at once: TASK_KILLED straight away.
  void kill(Agent& a, const std::string& id, std::string_view line) {
    if (o_.stop_after_s <= 0 || a.tasks.count(id) == 0) return finish(a, id, "TASK_KILLED");
    if (a.stopping.count(id) != 0) return;
    uint64_t grace_ms = 3000;
    if (size_t at = line.find(R"("grace_period":{"nanoseconds":)"); at != std::string_view::npos) {
      grace_ms = static_cast<uint64_t>(number_after(line, R"("nanoseconds":)", at) / 1e6);
    }
    uint64_t stop_ms = std::min(grace_ms, static_cast<uint64_t>(o_.stop_after_s * 1000));
    status(a, id, "TASK_KILLING");
    auto& timer = a.stopping[id];
    timer = clock_.new_timer();
    Agent* ap = &a;
    timer->start(stop_ms, [this, ap, id] {
      ap->stopping.erase(id);  // (a timer may be deleted by its own callback)
      finish(*ap, id, "TASK_KILLED");
    });
  }

  void finish(Agent& a, const std::string& id, const char* state) {
    a.stopping.erase(id);  // (it finished on its own while stopping)
    auto it = a.tasks.find(id);
    if (it != a.tasks.end()) {
      a.free_cpus += it->second.cpus;
      a.free_mem += it->second.mem;
      for (uint32_t p : it->second.ports) give_port(a.free_ports, p);
      a.tasks.erase(it);
    }
    status(a, id, state);
    offer(a);
  }

  void offer(Agent& a) {
    if (auto o = offer_request(a)) client_.request(std::move(o->first), std::move(o->second));
  }

  // An offer of the agent's free resources (after rescinding its current
  // one), unless one is on its way already.
  std::optional<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> offer_request(Agent& a) {
    Agent* ap = &a;
    if (a.offering) return std::nullopt;
    a.offering = true;
    if (!a.current_offer.empty()) {
      uvsched::ClientRequest rescind;
      rescind.method = "DELETE";
      rescind.url = a.base + "/v1/agents/" + a.host + "/offers/" + a.current_offer;
      client_.request(std::move(rescind), [](uvsched::ClientResponse&&) {});
      a.current_offer.clear();
    }
    uvsched::ClientRequest req;
    req.method = "POST";
    req.url = a.base + "/v1/agents/" + a.host + "/offers";
    req.body = R"({"offers":[{"resources":)" +
               resources(std::max(a.free_cpus, 0.0), std::max(a.free_mem, 0.0), a.free_ports) + "}]}";
    uvsched::ClientCallback done = [this, ap](uvsched::ClientResponse&& r) {
      ap->offering = false;
      if (r.ok()) {
        size_t at = r.body.find("\"value\":\"");
        if (at != std::string::npos) ap->current_offer = r.body.substr(at + 9, r.body.find('"', at + 9) - at - 9);
      }
      if (r.ok() && !ap->offered) {
        ap->offered = true;
        if (++offered_ == o_.agents) all_offered();
      }
      // Offers expire: keep one live.
      ap->reoffer->start(static_cast<uint64_t>(o_.reoffer_s * 1000), [this, ap] { offer(*ap); });
    };
    return std::make_pair(std::move(req), std::move(done));
  }

  void status(Agent& a, const std::string& id, const char* state) {
    auto [req, done] = status_request(a, id, {state});
    client_.request(std::move(req), std::move(done));
  }

  // Several updates of one task in one post, as the API allows.
  std::pair<uvsched::ClientRequest, uvsched::ClientCallback> status_request(Agent& a, const std::string& id,
                                                                            std::initializer_list<const char*> states) {
    uvsched::ClientRequest req;
    req.method = "POST";
    req.url = a.base + "/v1/agents/" + a.host + "/status";
    req.body = R"({"statuses":[)";
    bool first = true;
    for (const char* state : states) {
      if (!first) req.body += ',';
      first = false;
      req.body += std::string(R"({"task_id":{"value":")") + id + R"("},"state":")" + state + '"';
      auto task = a.tasks.find(id);
      if (std::string_view(state) == "TASK_RUNNING" && task != a.tasks.end() && !task->second.running_data.empty()) {
        req.body += R"(,"data":")" + task->second.running_data + '"';
      }
      req.body += '}';
    }
    req.body += "]}";
    // Not taken (the leader is loading, or this daemon no longer leads): sent
    // again to wherever the agent's stream is by then.
    Agent* ap = &a;
    std::string body = req.body;
    return {std::move(req), [this, ap, body](uvsched::ClientResponse&& r) {
              if (r.error == 0 && r.status != 503 && r.status != 307) return;
              auto t = std::shared_ptr<uvsched::Timer>(clock_.new_timer());
              t->start(kResubscribeMs, [this, ap, body, t] {
                uvsched::ClientRequest again;
                again.method = "POST";
                again.url = ap->base + "/v1/agents/" + ap->host + "/status";
                again.body = body;
                client_.request(std::move(again), [](uvsched::ClientResponse&&) {});
              });
            }};
  }

  void all_offered() {
    fprintf(stderr, "all %d agents subscribed and offering\n", o_.agents);
    if (o_.pods <= 0) return;
    if (!setup_done_) return set_up([this] { all_offered(); });
    start_ns_ = uv_hrtime();
    start_cpu_us_ = cpu_us();
    reporting_ = true;
    int batches = std::max(1, o_.concurrency / std::max(1, o_.pipeline));
    for (int i = 0; i < batches && next_pod_ < o_.pods; ++i) create_batch();
  }

  // --pipeline creates back to back on one connection; the next batch goes
  // out when the last of them is answered.
  void create_batch() {
    std::vector<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> batch;
    auto left = std::make_shared<int>(0);
    for (int i = 0; i < std::max(1, o_.pipeline) && next_pod_ < o_.pods; ++i) {
      batch.emplace_back(create_request(next_pod_++), [this, left](uvsched::ClientResponse&& r) {
        if (!r.ok()) ++create_errors_;
        if (--*left == 0 && next_pod_ < o_.pods) create_batch();
      });
    }
    *left = static_cast<int>(batch.size());
    if (batch.size() == 1) {
      client_.request(std::move(batch[0].first), std::move(batch[0].second));
    } else {
      client_.pipeline(std::move(batch));
    }
  }

  uvsched::ClientRequest create_request(int n) {
    std::string name = "perf-" + std::to_string(n);
    std::string labels, spec;
    if (o_.gang_size > 0)
      labels = R"(,"labels":{"scheduling.x-k8s.io/pod-group":"gang-)" + std::to_string(n / o_.gang_size) + R"("})";
    return pod_request(name, labels, spec);
  }

  uvsched::ClientRequest pod_request(const std::string& name, const std::string& labels, const std::string& spec) {
    uvsched::ClientRequest req;
    req.method = "POST";
    req.url = servers_[0] + "/api/v1/namespaces/default/pods";
    req.body = R"({"metadata":{"name":")" + name + R"(")" + labels + R"(},"spec":{)" + spec +
               R"("containers":[{"name":"c","image":"i",)"
               R"("resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}]}})";
    created_at_["default/" + name] = uv_hrtime();
    return req;
  }

  // What the pods need made first, one request after another: the PodGroups
  // (--gang-size) and the PriorityClass of the --high-pods.
  void set_up(std::function<void()> then) {
    std::vector<std::pair<std::string, std::string>> objects;  // (collection path, body)
    if (o_.high_pods > 0) {
      objects.emplace_back("/apis/scheduling.k8s.io/v1/priorityclasses",
                           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                           R"("metadata":{"name":"bench-high"},"value":1000})");
    }
    for (int g = 0; o_.gang_size > 0 && g * o_.gang_size < o_.pods; ++g) {
      objects.emplace_back(
          "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
          R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"gang-)" +
              std::to_string(g) + R"("},"spec":{"minMember":)" + std::to_string(o_.gang_size) + "}}");
    }
    auto left = std::make_shared<size_t>(objects.size());
    setup_done_ = true;
    if (objects.empty()) return then();
    for (auto& [path, body] : objects) {
      uvsched::ClientRequest req;
      req.method = "POST";
      req.url = servers_[0] + path;
      req.body = body;
      client_.request(std::move(req), [left, then](uvsched::ClientResponse&& r) {
        if (r.error != 0 || (r.status != 201 && r.status != 409)) {  // 409: made by an earlier run
          fprintf(stderr, "agent_sim: set-up create answered %d: %s\n", r.status, r.body.c_str());
          exit(1);
        }
        if (--*left == 0) then();
      });
    }
  }

  // --high-pods: the cluster is full of the first pods; these, of a higher
  // priority, are each placed by preempting one of them.
  void create_high_pods() {
    high_start_ns_ = uv_hrtime();
    high_left_ = o_.high_pods;
    for (int i = 0; i < o_.high_pods; ++i) {
      client_.request(pod_request("high-" + std::to_string(i), "", R"("priorityClassName":"bench-high",)"),
                      [this](uvsched::ClientResponse&& r) {
                        if (!r.ok() || r.status != 201) ++create_errors_;
                      });
    }
  }

  void launched(const std::string& pod) {
    auto it = created_at_.find(pod);
    if (it == created_at_.end()) return;
    uint64_t now = uv_hrtime();
    double ms = static_cast<double>(now - it->second) / 1e6;
    created_at_.erase(it);
    if (pod.rfind("default/high-", 0) == 0) {
      high_latencies_ms_.push_back(ms);
      if (--high_left_ == 0) report_high(now);
      return;
    }
    latencies_ms_.push_back(ms);
    if (static_cast<int>(latencies_ms_.size()) == o_.pods) report(now);
  }

  // This process's CPU time (all threads), to tell the driver's share of a
  // two-core machine from the daemon's.
  static uint64_t cpu_us() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto us = [](const timeval& t) {
      return static_cast<uint64_t>(t.tv_sec) * 1000000 + static_cast<uint64_t>(t.tv_usec);
    };
    return us(ru.ru_utime) + us(ru.ru_stime);
  }

  void report(uint64_t now) {
    double secs = static_cast<double>(now - start_ns_) / 1e9;
    std::sort(latencies_ms_.begin(), latencies_ms_.end());
    auto pct = [&](double p) { return latencies_ms_[static_cast<size_t>(p * (latencies_ms_.size() - 1))]; };
    printf(
        "placed=%d agents=%d seconds=%.3f pods_per_second=%.0f p50_ms=%.1f p99_ms=%.1f create_errors=%d "
        "sim_cpu_us_per_pod=%.0f\n",
        o_.pods, o_.agents, secs, o_.pods / secs, pct(0.5), pct(0.99), create_errors_,
        static_cast<double>(cpu_us() - start_cpu_us_) / o_.pods);
    fflush(stdout);
    reporting_ = false;
    if (o_.high_pods > 0) return create_high_pods();
    if (!held_.empty()) {
      send_held(getenv("AGENT_SIM_EXIT_AFTER_REPORT") != nullptr);
      return;
    }
    if (getenv("AGENT_SIM_EXIT_AFTER_REPORT")) exit(0);
  }

  void report_high(uint64_t now) {
    double secs = static_cast<double>(now - high_start_ns_) / 1e9;
    auto& l = high_latencies_ms_;
    std::sort(l.begin(), l.end());
    auto pct = [&](double p) { return l[static_cast<size_t>(p * (l.size() - 1))]; };
    printf(
        "high_priority placed=%d seconds=%.3f preemptions_per_second=%.0f p50_ms=%.1f p99_ms=%.1f create_errors=%d\n",
        o_.high_pods, secs, o_.high_pods / secs, pct(0.5), pct(0.99), create_errors_);
    fflush(stdout);
    if (getenv("AGENT_SIM_EXIT_AFTER_REPORT")) exit(0);
  }

  // The statuses --hold-statuses kept back, 64 posts at a time; the pods then
  // run, and the report says how long that took.
  void send_held(bool exit_after) {
    held_exit_ = exit_after;
    held_start_ns_ = uv_hrtime();
    held_left_ = held_.size();
    for (int i = 0; i < 64; ++i) send_next_held();
  }

  void send_next_held() {
    if (held_next_ >= held_.size()) return;
    auto [agent, id] = held_[held_next_++];
    auto [req, unused] = status_request(*agent, id, {"TASK_STARTING", "TASK_RUNNING"});
    client_.request(std::move(req), [this](uvsched::ClientResponse&& r) {
      if (!r.ok()) ++status_errors_;
      if (--held_left_ > 0) return send_next_held();
      printf("held statuses sent: %zu in %.3f s, errors=%d\n", held_.size(),
             static_cast<double>(uv_hrtime() - held_start_ns_) / 1e9, status_errors_);
      fflush(stdout);
      if (held_exit_) exit(0);
    });
  }

 private:
  uvsched::LoopClock clock_;
  Options o_;
  std::vector<std::string> servers_;  // --server, split at its commas
  FILE* events_ = nullptr;
  simdjson::dom::parser parser_;  // for --pod-status and RECONCILE
  uvsched::HttpClient client_;
  std::map<std::string, std::unique_ptr<Agent>> agents_;
  int offered_ = 0;
  int next_pod_ = 0;
  int create_errors_ = 0;
  uint64_t start_ns_ = 0;
  uint64_t start_cpu_us_ = 0;
  std::map<std::string, uint64_t> created_at_;
  bool reporting_ = false;  // between the first create and the report
  bool setup_done_ = false;
  uint64_t high_start_ns_ = 0;
  int high_left_ = 0;
  std::vector<double> high_latencies_ms_;
  std::vector<std::pair<Agent*, std::string>> held_;
  size_t held_next_ = 0, held_left_ = 0;
  uint64_t held_start_ns_ = 0;
  bool held_exit_ = false;
  int status_errors_ = 0;
  std::vector<double> latencies_ms_;
  std::vector<std::pair<uvsched::ClientRequest, uvsched::ClientCallback>> muxed_;
  uvsched::NextTurn mux_turn_;
};

}  // namespace

constexpr const char* kUsage =
    "usage: agent_sim [--server URL[,URL...]] [--agents N] [--prefix NAME] [--labels K=V,...] [--cpus C] [--mem MIB]\n"
    "                 [--ports B-E,...|none] [--finish-after S] [--stop-after S] [--reoffer S] [--pod-status 0]\n"
    "                 [--pods M [--concurrency C] [--pipeline P] [--agent-mux K] [--hold-statuses 1]\n"
    "                  [--gang-size G] [--high-pods H]]\n"
    "  N simulated agents (default 1000) named NAME-0.. (default sim) subscribe to the daemon at URL\n"
    "  (default http://127.0.0.1:10200), each offering C cpus (4), MIB memory (8192) and the port\n"
    "  ranges (31000-32000), labelled K=V (sim=true). They answer LAUNCH with TASK_STARTING and\n"
    "  TASK_RUNNING (TASK_FINISHED S seconds later with --finish-after) and KILL with TASK_KILLED\n"
    "  (with --stop-after S: TASK_KILLING, then TASK_KILLED once the task's process has taken S seconds\n"
    "  to stop, or at the end of the KILL's grace period if that comes first).\n"
    "  TASK_RUNNING carries the pod's status, its containers running and ready (--pod-status 0: none).\n"
    "  With --pods M it then creates M pods and reports pods placed per second; with --gang-size G\n"
    "  in PodGroups of G (minMember G); with --high-pods H, once the M are placed, H more of\n"
    "  priority 1000 (PriorityClass bench-high), placed by preemption when the M fill the agents.\n"
    "  With several URLs (daemons on one etcd) each agent follows a standby's redirect to the leader\n"
    "  and, when its stream ends, subscribes again to the next.\n"
    "  --events-log FILE appends a line per LAUNCH and KILL received.\n";

// A number that is all of `text` and at least `min`.
template <typename T>
bool parse_number(const std::string& text, T min, T* out) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min) return false;
  *out = v;
  return true;
}

// "k=v,k2=v2" as a JSON object.
bool parse_labels(const std::string& text, std::string* json) {
  std::string out = "{";
  size_t from = 0;
  while (from < text.size()) {
    size_t comma = std::min(text.find(',', from), text.size());
    std::string pair = text.substr(from, comma - from);
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    if (out.size() > 1) out += ',';
    uvsched::append_json_string(out, pair.substr(0, eq));
    out += ':';
    uvsched::append_json_string(out, pair.substr(eq + 1));
    from = comma + 1;
  }
  *json = out + "}";
  return true;
}

// "31000-32000,40000-40010", or "none"; sorted and disjoint.
bool parse_ports(const std::string& text, std::vector<PortRange>* ports) {
  std::vector<PortRange> out;
  size_t from = 0;
  while (text != "none" && from < text.size()) {
    size_t comma = std::min(text.find(',', from), text.size());
    std::string range = text.substr(from, comma - from);
    size_t dash = range.find('-');
    PortRange r;
    if (dash == std::string::npos || !parse_number(range.substr(0, dash), 1u, &r.begin) ||
        !parse_number(range.substr(dash + 1), r.begin, &r.end) || r.end > 65535)
      return false;
    if (!out.empty() && r.begin <= out.back().end) return false;
    out.push_back(r);
    from = comma + 1;
  }
  *ports = std::move(out);
  return true;
}

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "agent_sim: %s needs a value (see agent_sim --help)\n", k.c_str());
      return 2;
    }
    std::string v = argv[i + 1];
    bool ok = true;
    if (k == "--server") {
      o.server = v;
      for (size_t from = 0; ok && from <= v.size();) {  // each one an http(s) URL
        size_t comma = std::min(v.find(',', from), v.size());
        ok = uvsched::parse_url(v.substr(from, comma - from)).has_value();
        from = comma + 1;
      }
    } else if (k == "--prefix") {
      o.prefix = v;  // a hostname in the agents' URLs
      ok = !v.empty() && v.find_first_of("/?# ") == std::string::npos;
    } else if (k == "--labels")
      ok = parse_labels(v, &o.labels_json);
    else if (k == "--events-log") {
      o.events_log = v;
      ok = !v.empty();
    } else if (k == "--ports")
      ok = parse_ports(v, &o.ports);
    else if (k == "--agents")
      ok = parse_number(v, 1, &o.agents);
    else if (k == "--cpus")
      ok = parse_number(v, 0.0, &o.cpus);
    else if (k == "--mem")
      ok = parse_number(v, 0.0, &o.mem_mib);
    else if (k == "--finish-after")
      ok = parse_number(v, 0.0, &o.finish_after_s);
    else if (k == "--stop-after")
      ok = parse_number(v, 0.0, &o.stop_after_s);
    else if (k == "--pods")
      ok = parse_number(v, 0, &o.pods);
    else if (k == "--concurrency")
      ok = parse_number(v, 1, &o.concurrency);
    else if (k == "--pipeline")
      ok = parse_number(v, 1, &o.pipeline);
    else if (k == "--agent-mux")
      ok = parse_number(v, 1, &o.agent_mux);
    else if (k == "--gang-size")
      ok = parse_number(v, 1, &o.gang_size);
    else if (k == "--high-pods")
      ok = parse_number(v, 1, &o.high_pods);
    else if (k == "--reoffer")
      ok = parse_number(v, 0.001, &o.reoffer_s);
    else if (k == "--pod-status") {
      o.pod_status = v == "1" || v == "true";
      ok = o.pod_status || v == "0" || v == "false";
    } else if (k == "--hold-statuses") {
      o.hold_statuses = v == "1" || v == "true";
      ok = o.hold_statuses || v == "0" || v == "false";
    } else {
      fprintf(stderr, "agent_sim: unknown flag %s (see agent_sim --help)\n", k.c_str());
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "agent_sim: bad value for %s: '%s' (see agent_sim --help)\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  uvsched::log_configure(uvsched::LogLevel::kWarn, uvsched::LogFormat::kText);
  uv_loop_t* loop = uv_default_loop();
  Sim sim(loop, o);
  sim.run();
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
