// KubeML's wire types (Go encoding/json, snake_case), read with simdjson and
// written back field for field, so the parameter server gets the request as
// the controller sent it.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_body.h"
#include "reactor/json_writer.h"

namespace uvsched {

struct TrainOptions {
  int64_t default_parallelism = 0;
  bool static_parallelism = false;
  int64_t validate_every = 0;
  int64_t k = 0;
  double goal_accuracy = 0;
};

struct TrainRequest {
  std::string model_type;
  int64_t batch_size = 0;
  int64_t epochs = 0;
  std::string dataset;
  double lr = 0;
  std::string function_name;
  TrainOptions options;
};

struct JobState {
  int64_t parallelism = 0;
  double elapsed_time = 0;  // seconds
};

struct JobInfo {
  std::string id;
  JobState state;
};

struct TrainTask {
  TrainRequest request;
  bool has_request = false;
  JobInfo job;
};

struct InferRequest {
  std::string model_id;
  std::string function_name;  // optional; the router's default is "network"
};

// A TrainRequest. strict (a /train body): model_type, dataset, function_name,
// batch_size > 0 and epochs > 0 are required. Options may always be absent.
std::optional<JsonError> parse_train_request(simdjson::dom::object obj, std::string_view path, TrainRequest* out,
                                             bool strict = true);
// A /job body: job.id is required; job.state fields default to 0 like Go's.
std::optional<JsonError> parse_train_task(simdjson::dom::object obj, TrainTask* out);
// An /infer body: model_id and a data array are required.
std::optional<JsonError> parse_infer_request(simdjson::dom::object obj, InferRequest* out);

// KubeML's calls to the scheduler that it never retries and whose answer's
// status it ignores (SPEC §8): POST /job, after which the train job waits for
// its /update without a time-out whatever the status, and the PS's
// DELETE /finish/{id}, a job's only end. A refusal of either (a 503 while no
// leader is known, a 429 over the client's rate) strands the job or keeps it
// for ever, so the daemon answers them and never refuses them.
bool is_kubeml_call_never_retried(std::string_view path);

void write_train_request(JsonWriter& w, const TrainRequest& r);
void write_train_task(JsonWriter& w, const TrainRequest& r, const std::string& job_id, const JobState& state);
void write_job_state(JsonWriter& w, const JobState& s);

}  // namespace uvsched
