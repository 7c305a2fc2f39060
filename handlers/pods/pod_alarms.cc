#include "handlers/pods/pod_alarms.h"

#include <utility>

namespace uvsched {

PodAlarms::PodAlarms(Clock& clock, Due due) : clock_(clock), told_(std::move(due)), timer_(clock.new_timer()) {}

void PodAlarms::at_unix(const std::string& pod, int64_t unix_ms) {
  int64_t left = unix_ms - clock_.unix_ms();
  after(pod, left > 0 ? static_cast<uint64_t>(left) : 0);
}

void PodAlarms::after(const std::string& pod, uint64_t delay_ms) {
  due_.add(pod, clock_.now_ms() + delay_ms, DelayQueue::Mode::kReplaceExisting);
  arm();
}

std::optional<uint64_t> PodAlarms::due_at(const std::string& pod) const { return due_.due(pod); }

void PodAlarms::forget(const std::string& pod) {
  if (due_.remove(pod)) arm();
}

void PodAlarms::clear() {
  due_ = DelayQueue();
  timer_->stop();
}

void PodAlarms::arm() {
  std::optional<uint64_t> next = due_.next_due();
  if (!next) {
    timer_->stop();
    return;
  }
  uint64_t now = clock_.now_ms();
  timer_->start(*next > now ? *next - now : 0, [this] { fire(); });
}

void PodAlarms::fire() {
  // Popped before anyone is told: a pod due again from `told_` stays.
  for (const std::string& pod : due_.pop_due(clock_.now_ms())) told_(pod);
  arm();
}

}  // namespace uvsched
