#include "policy/pod_task_registry.h"

#include <cassert>
#include <cstdio>
#include <cstring>
#include <new>

namespace uvsched {
namespace {
constexpr std::string_view kPrefix = "pod.";
constexpr size_t kSuffix = 13;  // ".%012x"
constexpr uint64_t kSerialMask = 0xffffffffffffULL;
}  // namespace

std::string PodTaskRegistry::make_id(std::string_view pod_key, uint64_t serial) {
  char suffix[kSuffix + 1];
  std::snprintf(suffix, sizeof suffix, ".%012llx", static_cast<unsigned long long>(serial & kSerialMask));
  std::string id;
  id.reserve(kPrefix.size() + pod_key.size() + kSuffix);
  id += kPrefix;
  for (char c : pod_key) id += c == '/' ? '.' : c;
  return id.append(suffix, kSuffix);
}

namespace {
// The "ns.name" part of an id made by make_id, and the dot in it; nullopt
// for anything else. No copy: a status update asks this of every id.
std::optional<std::pair<std::string_view, size_t>> middle_of(std::string_view id) {
  if (!id.starts_with(kPrefix) || id.size() < kPrefix.size() + 3 + kSuffix || id[id.size() - kSuffix] != '.')
    return std::nullopt;
  std::string_view middle = id.substr(kPrefix.size(), id.size() - kPrefix.size() - kSuffix);  // ns.name
  size_t dot = middle.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == middle.size()) return std::nullopt;
  return std::make_pair(middle, dot);
}
}  // namespace

std::optional<std::string> PodTaskRegistry::pod_of(std::string_view id) {
  auto m = middle_of(id);
  if (!m) return std::nullopt;
  std::string key(m->first);
  key[m->second] = '/';
  return key;
}

std::optional<uint64_t> PodTaskRegistry::serial_of(std::string_view id) {
  if (!middle_of(id)) return std::nullopt;
  uint64_t serial = 0;
  // Lower-case hex only, as make_id writes it: one serial, one id.
  for (char c : id.substr(id.size() - kSuffix + 1)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    serial = serial << 4 | static_cast<uint64_t>(digit);
  }
  return serial;
}

uint32_t PodTaskRegistry::intern_agent(std::string_view hostname) {
  if (auto it = agent_ids_.find(hostname); it != agent_ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(agent_names_.size());
  agent_ids_.emplace(hostname, id);
  agent_names_.emplace_back(hostname);
  return id;
}

PodTask* PodTaskRegistry::by_id(std::string_view task_id) {
  auto serial = serial_of(task_id);
  auto pod = serial ? pod_of(task_id) : std::nullopt;
  if (!pod) return nullptr;
  PodTask* task = by_pod(*pod);
  return task && task->serial == *serial ? task : nullptr;
}

void PodTaskRegistry::SlotFree::operator()(Slot* s) const {
  s->~Slot();
  ::operator delete(s);
}

PodTaskRegistry::SlotPtr PodTaskRegistry::make_slot(std::string_view pod_key, PodTask task) {
  Slot* s = new (::operator new(sizeof(Slot) + pod_key.size())) Slot{task, static_cast<uint32_t>(pod_key.size())};
  std::memcpy(s + 1, pod_key.data(), pod_key.size());
  return SlotPtr(s);
}

PodTask& PodTaskRegistry::add(std::string_view pod_key, PodTask task, const Labels* labels) {
  task.serial &= kSerialMask;
  task.labels = labels ? label_sets_.acquire(*labels) : 0;
  if (auto it = tasks_.find(pod_key); it != tasks_.end()) {
    Slot* slot = it->get();
    if (!labels) task.labels = slot->task.labels;
    bool moved = slot->task.agent != task.agent;
    bool recounted = moved || task.labels != slot->task.labels;
    if (recounted) tell(pod_key, slot->task.labels, PlacedChange::kUncounted);
    if (labels) label_sets_.release(slot->task.labels);  // after it was told of: its set is still there
    if (moved) unlink_agent(slot);
    count_victim(slot->task, -1);
    count_victim(task, +1);
    cpus_held_ += task.cpus - slot->task.cpus;
    mem_mib_held_ += task.mem_mib - slot->task.mem_mib;
    slot->task = task;
    if (moved) link_agent(slot);
    if (recounted) tell(pod_key, task.labels, PlacedChange::kCounted);
    return slot->task;
  }
  Slot* slot = tasks_.insert(make_slot(pod_key, task)).first->get();
  link_agent(slot);
  count_victim(task, +1);
  cpus_held_ += task.cpus;
  mem_mib_held_ += task.mem_mib;
  tell(pod_key, task.labels, PlacedChange::kCounted);
  return slot->task;
}

void PodTaskRegistry::erase_pod(std::string_view pod_key) {
  auto it = tasks_.find(pod_key);
  if (it == tasks_.end()) return;
  tell(pod_key, (*it)->task.labels, PlacedChange::kUncounted);
  unlink_agent(it->get());
  count_victim((*it)->task, -1);
  label_sets_.release((*it)->task.labels);
  cpus_held_ -= (*it)->task.cpus;
  mem_mib_held_ -= (*it)->task.mem_mib;
  if (tasks_.size() == 1) cpus_held_ = mem_mib_held_ = 0;  // no drift from float sums once empty
  tasks_.erase(it);
}

void PodTaskRegistry::count_victim(const PodTask& t, int delta) {
  if (!is_victim(t)) return;
  if (delta > 0) {
    ++victims_[t.priority][t.agent];
    return;
  }
  auto p = victims_.find(t.priority);
  if (p == victims_.end()) return;
  auto a = p->second.find(t.agent);
  if (a != p->second.end() && --a->second == 0) p->second.erase(a);
  if (p->second.empty()) victims_.erase(p);
}

void PodTaskRegistry::mark_deleted(std::string_view pod_key, PodTask& task) {
  count_victim(task, -1);
  if (!task.deleted) tell(pod_key, task.labels, PlacedChange::kUncounted);
  task.deleted = true;
}

void PodTaskRegistry::mark_evicted(PodTask& task) {
  count_victim(task, -1);
  task.evicted = true;
}

void PodTaskRegistry::link_agent(Slot* s) {
  std::vector<Slot*>& list = by_agent_[s->task.agent];
  s->agent_pos = static_cast<uint32_t>(list.size());
  list.push_back(s);
}

void PodTaskRegistry::unlink_agent(Slot* s) {
  auto a = by_agent_.find(s->task.agent);
  assert(a != by_agent_.end() && s->agent_pos < a->second.size() && a->second[s->agent_pos] == s);
  std::vector<Slot*>& list = a->second;
  Slot* last = list.back();
  list[s->agent_pos] = last;
  last->agent_pos = s->agent_pos;
  list.pop_back();
  if (list.empty()) by_agent_.erase(a);
}

std::vector<std::pair<std::string_view, const PodTask*>> PodTaskRegistry::on_agent(uint32_t agent) const {
  std::vector<std::pair<std::string_view, const PodTask*>> out;
  if (auto a = by_agent_.find(agent); a != by_agent_.end()) {
    out.reserve(a->second.size());
    for (const Slot* s : a->second) out.emplace_back(s->key(), &s->task);
  }
  return out;
}

PodTask* PodTaskRegistry::by_pod(std::string_view pod_key) {
  auto it = tasks_.find(pod_key);
  return it == tasks_.end() ? nullptr : &(*it)->task;
}

}  // namespace uvsched
