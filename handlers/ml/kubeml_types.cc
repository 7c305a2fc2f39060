#include "handlers/ml/kubeml_types.h"

#include "policy/parallelism_policy.h"

namespace uvsched {
namespace {

std::string join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::optional<JsonError> positive(std::string_view path, int64_t v) {
  if (v > 0) return std::nullopt;
  return JsonError{"field '" + std::string(path) + "' must be greater than 0", std::string(path)};
}

// Bounds no real job comes near, so that what a job says can be counted
// with and up to: workers as --max-parallelism bounds them, epochs in an
// int, an epoch shorter than 30 years.
constexpr int64_t kMostEpochs = 1'000'000'000;
constexpr double kLongestEpochSeconds = 1e9;

std::optional<JsonError> at_most(std::string_view path, int64_t v, int64_t most) {
  if (v <= most) return std::nullopt;
  return JsonError{"field '" + std::string(path) + "' must be at most " + std::to_string(most), std::string(path)};
}

std::optional<JsonError> non_empty(std::string_view path, const std::string& v) {
  if (!v.empty()) return std::nullopt;
  return JsonError{"field '" + std::string(path) + "' must not be empty", std::string(path)};
}

}  // namespace

std::optional<JsonError> parse_train_request(simdjson::dom::object obj, std::string_view path, TrainRequest* out,
                                             bool strict) {
  auto required_text = [&](const char* key, std::string* field) -> std::optional<JsonError> {
    std::string p = join(path, key);
    if (auto e = read_string(obj, key, p, field, strict)) return e;
    return strict ? non_empty(p, *field) : std::nullopt;
  };
  auto required_count = [&](const char* key, int64_t* field) -> std::optional<JsonError> {
    std::string p = join(path, key);
    if (auto e = read_int(obj, key, p, field, strict)) return e;
    return strict ? positive(p, *field) : std::nullopt;
  };
  // Every field is looked at, and every problem reported: the first is the
  // error, all of them its causes.
  std::optional<JsonError> first;
  auto note = [&](std::optional<JsonError> e) {
    if (!e) return;
    if (!first) first = *e;
    first->all.emplace_back(e->field, e->message);
  };
  note(required_text("model_type", &out->model_type));
  note(required_count("batch_size", &out->batch_size));
  if (auto e = required_count("epochs", &out->epochs)) {
    note(e);
  } else {
    note(at_most(join(path, "epochs"), out->epochs, kMostEpochs));
  }
  note(required_text("dataset", &out->dataset));
  note(read_number(obj, "lr", join(path, "lr"), &out->lr));
  note(required_text("function_name", &out->function_name));

  simdjson::dom::object opts;
  bool present = false;
  std::string op = join(path, "options");
  if (auto e = read_object(obj, "options", op, &opts, &present)) {
    note(e);
  } else if (present) {
    TrainOptions& o = out->options;
    if (auto e = read_int(opts, "default_parallelism", join(op, "default_parallelism"), &o.default_parallelism)) {
      note(e);
    } else {
      note(at_most(join(op, "default_parallelism"), o.default_parallelism, kMaxParallelism));
    }
    note(read_bool(opts, "static_parallelism", join(op, "static_parallelism"), &o.static_parallelism));
    note(read_int(opts, "validate_every", join(op, "validate_every"), &o.validate_every));
    note(read_int(opts, "k", join(op, "k"), &o.k));
    note(read_number(opts, "goal_accuracy", join(op, "goal_accuracy"), &o.goal_accuracy));
  }
  if (first && first->all.size() == 1) first->all.clear();  // one problem: the error says it all
  return first;
}

std::optional<JsonError> parse_train_task(simdjson::dom::object obj, TrainTask* out) {
  simdjson::dom::object job, state, request;
  bool present = false;
  if (auto e = read_object(obj, "job", "job", &job, &present, true)) return e;
  if (auto e = read_string(job, "id", "job.id", &out->job.id, true)) return e;
  if (auto e = non_empty("job.id", out->job.id)) return e;
  if (auto e = read_object(job, "state", "job.state", &state, &present)) return e;
  if (present) {
    if (auto e = read_int(state, "parallelism", "job.state.parallelism", &out->job.state.parallelism)) return e;
    if (auto e = at_most("job.state.parallelism", out->job.state.parallelism, kMaxParallelism)) return e;
    if (auto e = read_number(state, "elapsed_time", "job.state.elapsed_time", &out->job.state.elapsed_time)) return e;
    if (out->job.state.elapsed_time < 0) {
      return JsonError{"field 'job.state.elapsed_time' must not be negative", "job.state.elapsed_time"};
    }
    if (!(out->job.state.elapsed_time <= kLongestEpochSeconds)) {
      return JsonError{"field 'job.state.elapsed_time' must be at most 1e9 seconds", "job.state.elapsed_time"};
    }
  }
  if (auto e = read_object(obj, "request", "request", &request, &out->has_request)) return e;
  // After each epoch the controller resends the request it started with: its
  // types are checked, but nothing is required of it.
  if (out->has_request) return parse_train_request(request, "request", &out->request, false);
  return std::nullopt;
}

std::optional<JsonError> parse_infer_request(simdjson::dom::object obj, InferRequest* out) {
  if (auto e = read_string(obj, "model_id", "model_id", &out->model_id, true)) return e;
  if (auto e = non_empty("model_id", out->model_id)) return e;
  if (auto e = read_string(obj, "function_name", "function_name", &out->function_name)) return e;
  simdjson::dom::element data;
  if (obj.at_key("data").get(data) != simdjson::SUCCESS || data.is_null()) {
    return JsonError{"field 'data' is required", "data"};
  }
  if (!data.is_array()) return JsonError{"field 'data' must be an array", "data"};
  return std::nullopt;
}

bool is_kubeml_call_never_retried(std::string_view path) { return path == "/job" || path.starts_with("/finish/"); }

void write_train_request(JsonWriter& w, const TrainRequest& r) {
  w.begin_object();
  w.key("model_type").value(r.model_type);
  w.key("batch_size").value(r.batch_size);
  w.key("epochs").value(r.epochs);
  w.key("dataset").value(r.dataset);
  w.key("lr").value(r.lr);
  w.key("function_name").value(r.function_name);
  w.key("options").begin_object();
  w.key("default_parallelism").value(r.options.default_parallelism);
  w.key("static_parallelism").value(r.options.static_parallelism);
  w.key("validate_every").value(r.options.validate_every);
  w.key("k").value(r.options.k);
  w.key("goal_accuracy").value(r.options.goal_accuracy);
  w.end_object();
  w.end_object();
}

void write_job_state(JsonWriter& w, const JobState& s) {
  w.begin_object().key("parallelism").value(s.parallelism).key("elapsed_time").value(s.elapsed_time).end_object();
}

void write_train_task(JsonWriter& w, const TrainRequest& r, const std::string& job_id, const JobState& state) {
  w.begin_object().key("request");
  write_train_request(w, r);
  w.key("job").begin_object().key("id").value(job_id).key("state");
  write_job_state(w, state);
  w.end_object().end_object();
}

}  // namespace uvsched
