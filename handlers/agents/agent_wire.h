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
  std::string data;   // base64 JSON merged into the pod's status, or empty
};

// Mesos resources: scalar cpus and mem (summed), port ranges; others are accepted and ignored.
std::optional<JsonError> read_resources(simdjson::dom::element list, std::string_view path, Resources* out);

// POST /v1/agents/{host}/subscribe: optional labels (strings) and total resources.
std::optional<JsonError> read_subscription(simdjson::dom::object body, Labels* labels, Resources* total);

// POST /v1/agents/{host}/offers: each offer's resources, and its id when the agent chose one.
std::optional<JsonError> read_offers(simdjson::dom::object body, const std::string& agent, std::vector<Offer>* out);

// POST /v1/agents/{host}/status.
std::optional<JsonError> read_statuses(simdjson::dom::object body, std::vector<TaskStatus>* out);

}  // namespace uvsched
