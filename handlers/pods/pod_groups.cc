#include "handlers/pods/pod_groups.h"

#include "reactor/log.h"

namespace uvsched {

PodGroups::PodGroups(Store& store, Clock& clock, PodWriter& writer, Counter counter, OnChange on_change)
    : clock_(clock),
      writer_(writer),
      counter_(std::move(counter)),
      on_change_(std::move(on_change)),
      informer_(store, clock, pod_group_kind().prefix(),
                [this](const std::string& key, const std::string* value) { on_object(key, value); }),
      prefix_(pod_group_kind().prefix()),
      flush_(clock, [this] { flush(); }) {}

void PodGroups::start() { informer_.start(); }

void PodGroups::stop() {
  informer_.stop();
  groups_.clear();
  dirty_.clear();
}

std::string PodGroups::group_of(const JsonValue& pod) {
  const JsonValue* labels = pod.find({"metadata", "labels"});
  if (!labels) return "";
  std::string name = labels->str(kPodGroupLabel);
  if (name.empty()) return "";
  const JsonValue* ns = pod.find({"metadata", "namespace"});
  return (ns ? ns->text() : "default") + "/" + name;
}

const PodGroups::Group* PodGroups::find(const std::string& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

void PodGroups::on_object(const std::string& key, const std::string* value) {
  std::string group = key.substr(prefix_.size());
  Group& g = groups_[group];
  if (!value) {
    g.exists = false;
    g.written.clear();
    gc(group);
    if (groups_.count(group)) on_change_(group);  // its members wait for it again, and say so
    return;
  }
  std::string error;
  auto obj = JsonValue::parse(*value, &error);
  if (!obj) return;
  bool news = !g.exists;
  PodGroupSpec spec = pod_group_spec(*obj);
  news = news || spec.min_member != g.spec.min_member || spec.timeout_s != g.spec.timeout_s;
  g.exists = true;
  g.spec = spec;
  const JsonValue* st = obj->get("status");
  g.written = st ? st->dump() : "";
  if (news) {
    touch(group);
    on_change_(group);
  }
}

void PodGroups::join(const std::string& group, const std::string& pod) {
  if (groups_[group].members.insert(pod).second) touch(group);
}

void PodGroups::leave(const std::string& group, const std::string& pod, const std::string& outcome) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  Group& g = it->second;
  if (outcome == "Succeeded") ++g.succeeded;
  if (outcome == "Failed") ++g.failed;
  g.members.erase(pod);
  touch(group);
  gc(group);
}

void PodGroups::waiting(const std::string& group, uint64_t now) {
  Group& g = groups_[group];
  if (g.waiting_since_ms == 0) g.waiting_since_ms = std::max<uint64_t>(now, 1);
}

void PodGroups::placed(const std::string& group) {
  if (auto it = groups_.find(group); it != groups_.end()) it->second.waiting_since_ms = 0;
  touch(group);
}

uint64_t PodGroups::timed_out_after_s(const std::string& group, uint64_t now) const {
  const Group* g = find(group);
  if (!g || g->spec.timeout_s == 0 || g->waiting_since_ms == 0) return 0;
  uint64_t waited = now > g->waiting_since_ms ? (now - g->waiting_since_ms) / 1000 : 0;
  return waited >= g->spec.timeout_s ? waited : 0;
}

void PodGroups::touch(const std::string& group) {
  dirty_.insert(group);
  flush_.schedule();
}

void PodGroups::gc(const std::string& group) {
  auto it = groups_.find(group);
  if (it != groups_.end() && !it->second.exists && it->second.members.empty()) {
    groups_.erase(it);
    dirty_.erase(group);
  }
}

std::optional<JsonValue> PodGroups::status_of(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end() || !it->second.exists) return std::nullopt;
  const Group& g = it->second;
  GangCounts c = counter_(group, g.members);
  c.min_member = g.spec.min_member;
  c.members = g.members.size();
  c.succeeded = g.succeeded;
  c.failed = g.failed;
  uint64_t timed_out = timed_out_after_s(group, clock_.now_ms());
  c.timed_out = timed_out > 0;
  JsonValue st = JsonValue::object();
  st.set("phase", JsonValue::string(gang_phase(c)));
  st.set("scheduled", JsonValue::integer(static_cast<int64_t>(c.scheduled)));
  st.set("running", JsonValue::integer(static_cast<int64_t>(c.running)));
  st.set("succeeded", JsonValue::integer(static_cast<int64_t>(c.succeeded)));
  st.set("failed", JsonValue::integer(static_cast<int64_t>(c.failed)));
  if (c.timed_out && c.scheduled < static_cast<size_t>(std::max<int64_t>(1, c.min_member))) {
    st.set("reason", JsonValue::string("ScheduleTimeout"));
    st.set("message", JsonValue::string("waited " + std::to_string(timed_out) + "s, past scheduleTimeoutSeconds " +
                                        std::to_string(g.spec.timeout_s) + ", for minMember " +
                                        std::to_string(g.spec.min_member) + " members to fit at once"));
  }
  return st;
}

// Each changed group's status, written over the object as the store has it.
void PodGroups::flush() {
  std::set<std::string> dirty = std::move(dirty_);
  dirty_.clear();
  for (const auto& group : dirty) {
    std::optional<JsonValue> st = status_of(group);
    if (!st) continue;
    Group& g = groups_.at(group);
    std::string text = st->dump();
    if (text == g.written) continue;
    g.written = text;
    PodWriter::Update u;
    u.key = prefix_ + group;
    // The status as it is when the write is tried: a retry after a conflict
    // (another status write went first) writes the latest counts, never the
    // ones this update began with.
    u.change = [this, group](JsonValue& obj, int64_t) {
      std::optional<JsonValue> now = status_of(group);
      if (!now) return PodWriter::Verdict::kDecline;
      obj.set("status", std::move(*now));
      return PodWriter::Verdict::kPut;
    };
    u.done = [this, group](PodWriter::Result&& r) {
      if (r.written() || r.outcome == PodWriter::Outcome::kMissing || r.outcome == PodWriter::Outcome::kDeclined)
        return;
      log_warn("pod_group_status_failed").kv("group", group).kv("outcome", PodWriter::outcome_name(r.outcome));
      if (auto it = groups_.find(group); it != groups_.end()) it->second.written.clear();
    };
    writer_.update(std::move(u));
  }
}

}  // namespace uvsched
