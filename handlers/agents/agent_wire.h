// The agent API's request bodies (SPEC §4), read straight from simdjson's
// DOM into plain values: they are checked and used, never edited, so no
// mutable tree is built for them (agents post a status and an offer for
// every pod placed). Each reader returns the first problem, naming the field.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <vector>

#include "handlers/json_body.h"
#include "policy/label_selector.h"
#include "policy/offer_registry.h"

namespace uvsched {

// One entry of POST /v1/agents/{host}/status: Mesos's TaskStatus, the fields we use.
struct TaskStatus {
  std::string task_id;
  std::string state;  // TASK_*
  std::string data;   // the JSON object (decoded from the wire's base64) merged into the pod's status, or empty
};

// What an agent may put in a status's `data`: it is merged into a pod (and
// stored, and sent to every watcher), so its size and shape are bounded.
struct StatusDataLimits {
  size_t max_bytes = 64 * 1024;  // decoded
  size_t max_depth = 16;         // nested objects and arrays
  size_t max_values = 2'048;     // members and items, all levels together
};

// The most of cpus or of mem (MiB) an agent may have or offer.
inline constexpr double kMaxResourceScalar = 1e15;

// Mesos resources: scalar cpus and mem (summed), port ranges; others are accepted and ignored.
std::optional<JsonError> read_resources(simdjson::dom::element list, std::string_view path, Resources* out);

// POST /v1/agents/{host}/subscribe: optional labels (strings), total
// resources, and the framework id the agent's tasks were launched for (as
// SUBSCRIBED last named it; empty when it gives none).
std::optional<JsonError> read_subscription(simdjson::dom::object body, Labels* labels, Resources* total,
                                           std::string* framework_id = nullptr);

// POST /v1/agents/{host}/offers: each offer's resources, and its id when the agent chose one.
std::optional<JsonError> read_offers(simdjson::dom::object body, const std::string& agent, std::vector<Offer>* out);

// POST /v1/agents/{host}/message: a FrameworkMessage from an executor.
struct FrameworkMessage {
  std::string executor_id;
  std::string data;  // decoded from the wire's base64
};
std::optional<JsonError> read_framework_message(simdjson::dom::object body, FrameworkMessage* out);

// POST /v1/agents/{host}/executor-lost: which executor, and its exit status.
struct ExecutorLost {
  std::string executor_id;
  int64_t status = 0;
};
std::optional<JsonError> read_executor_lost(simdjson::dom::object body, ExecutorLost* out);

// POST /v1/agents/{host}/status. A status's `data`, when present, must be
// base64 of a JSON object within `limits`.
std::optional<JsonError> read_statuses(simdjson::dom::object body, std::vector<TaskStatus>* out,
                                       const StatusDataLimits& limits = {});

}  // namespace uvsched
