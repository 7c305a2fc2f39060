#include "policy/pod_task_registry.h"

#include <cstdio>

namespace uvsched {
namespace {
constexpr std::string_view kPrefix = "pod.";
constexpr size_t kSuffix = 13;  // ".%012x"
}  // namespace

std::string PodTaskRegistry::make_id(std::string_view pod_key, uint64_t random) {
  char suffix[kSuffix + 1];
  std::snprintf(suffix, sizeof suffix, ".%012llx", static_cast<unsigned long long>(random & 0xffffffffffffULL));
  std::string id(kPrefix);
  for (char c : pod_key) id += c == '/' ? '.' : c;
  return id + suffix;
}

std::optional<std::string> PodTaskRegistry::pod_of(std::string_view id) {
  if (!id.starts_with(kPrefix) || id.size() < kPrefix.size() + 3 + kSuffix || id[id.size() - kSuffix] != '.')
    return std::nullopt;
  std::string_view middle = id.substr(kPrefix.size(), id.size() - kPrefix.size() - kSuffix);  // ns.name
  size_t dot = middle.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == middle.size()) return std::nullopt;
  std::string key(middle);
  key[dot] = '/';
  return key;
}

PodTask* PodTaskRegistry::by_id(std::string_view task_id) {
  auto pod = pod_of(task_id);
  if (!pod) return nullptr;
  auto it = tasks_.find(*pod);
  return it != tasks_.end() && it->second.id == task_id ? &it->second : nullptr;
}

PodTask* PodTaskRegistry::by_pod(const std::string& pod_key) {
  auto it = tasks_.find(pod_key);
  return it == tasks_.end() ? nullptr : &it->second;
}

PodTask& PodTaskRegistry::add(PodTask task) {
  std::string key = task.pod_key;
  return tasks_[key] = std::move(task);
}

}  // namespace uvsched
