// meta.k8s.io/v1 Table renderings, which kubectl asks for (Accept: ...;as=Table)
// to print `kubectl get pods` and `-o wide`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "reactor/json_writer.h"

namespace uvsched {

bool wants_table(const std::string* accept);

// The parts every Table here is made of, for the registries' own kinds.
struct TableColumn {
  const char* name;
  const char* type;
  const char* format;
  int priority;  // 1: only with -o wide
};
// The Table's kind and columns; its rows array is left open.
void begin_table(JsonWriter& w, const std::vector<TableColumn>& columns);
// Closes the rows and the Table with its list metadata, written last because
// the token is known only once the rows are: the snapshot's resourceVersion
// and, for a list cut at its limit, the continue token for the rest (without
// which kubectl, asking 500 at a time, shows the first 500 and stops).
void end_table(JsonWriter& w, const std::string& resource_version, const std::string& continue_token = "");
// A row's `object`: the metadata kubectl needs (namespace column, names).
void write_row_object(JsonWriter& w, const JsonValue& obj);
// The AGE cell: since metadata.creationTimestamp, or <unknown>.
std::string table_age(const JsonValue& obj, int64_t now_unix_ms);

// A pod Table written a row at a time, so a list of 100k pods never holds
// more than one of them parsed (all at once they took ~6 KB each).
class PodTableWriter {
 public:
  PodTableWriter(const std::string& resource_version, int64_t now_unix_ms);
  void add(const JsonValue& pod);
  // What is written so far, to send ahead of the rest (a sliced list).
  std::string take_written() { return w_.take(); }
  // The rest, with the continue token when the list was cut at its limit.
  std::string finish(const std::string& continue_token = "");

 private:
  JsonWriter w_;
  std::string resource_version_;
  int64_t now_ms_;
};

std::string pod_table(const std::vector<JsonValue>& pods, const std::string& resource_version, int64_t now_unix_ms);
std::string node_table(const std::vector<JsonValue>& nodes, const std::string& resource_version, int64_t now_unix_ms);
std::string namespace_table(const std::vector<JsonValue>& namespaces, const std::string& resource_version,
                            int64_t now_unix_ms);
// `kubectl get events`: last seen, type, reason, object, message.
std::string event_table(const std::vector<JsonValue>& events, const std::string& resource_version, int64_t now_unix_ms);
// Kubernetes' short ages: 45s, 3m12s, 5h, 2d.
std::string human_age(int64_t seconds);

}  // namespace uvsched
