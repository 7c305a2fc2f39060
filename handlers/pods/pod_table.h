// meta.k8s.io/v1 Table renderings, which kubectl asks for (Accept: ...;as=Table)
// to print `kubectl get pods` and `-o wide`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "reactor/http_message.h"
#include "reactor/json_writer.h"

namespace uvsched {

// What each row's `object` holds, as the query's includeObject says: the
// object's metadata (the default), the whole object, which kubectl asks for
// to sort by a field anywhere in it (`--sort-by=.status.startTime`), or none.
enum class RowObject { kMetadata, kObject, kNone };

// Whether a request asks for a Table (Accept: ...;as=Table) and what its
// rows' objects hold; with an includeObject the API server does not take,
// `error` says so in its words (answer 400).
struct TableAsk {
  bool wanted = false;
  RowObject row = RowObject::kMetadata;
  std::string error;
};
TableAsk table_ask(const HttpRequest& request);

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
// A row's `object`: the metadata kubectl needs (namespace column, names),
// or as `row` says.
void write_row_object(JsonWriter& w, const JsonValue& obj, RowObject row);
// The AGE cell: since metadata.creationTimestamp, or <unknown>.
std::string table_age(const JsonValue& obj, int64_t now_unix_ms);

// The READY, STATUS and RESTARTS cells of a pod's row, as kubectl's own
// printer makes them (printPod in kubernetes/pkg/printers/internalversion),
// so a server-side Table and kubectl --server-print=false agree: the phase,
// unless the pod's status.reason, a scheduling gate, a container's waiting or
// terminated reason, or a deletion says more.
struct PodSummary {
  size_t ready = 0;  // containers ready and running
  size_t total = 0;  // containers in the spec
  size_t restarts = 0;
  std::string status;
};
PodSummary pod_summary(const JsonValue& pod);

// A pod Table written a row at a time, so a list of 100k pods never holds
// more than one of them parsed (all at once they took ~6 KB each).
class PodTableWriter {
 public:
  PodTableWriter(const std::string& resource_version, int64_t now_unix_ms, RowObject row = RowObject::kMetadata);
  void add(const JsonValue& pod);
  // What is written so far, to send ahead of the rest (a sliced list).
  std::string take_written() { return w_.take(); }
  // The rest, with the continue token when the list was cut at its limit.
  std::string finish(const std::string& continue_token = "");

 private:
  JsonWriter w_;
  std::string resource_version_;
  int64_t now_ms_;
  RowObject row_;
};

std::string pod_table(const std::vector<JsonValue>& pods, const std::string& resource_version, int64_t now_unix_ms,
                      RowObject row = RowObject::kMetadata);
std::string node_table(const std::vector<JsonValue>& nodes, const std::string& resource_version, int64_t now_unix_ms,
                       RowObject row = RowObject::kMetadata);
std::string namespace_table(const std::vector<JsonValue>& namespaces, const std::string& resource_version,
                            int64_t now_unix_ms, RowObject row = RowObject::kMetadata);
// `kubectl get events`: last seen, type, reason, object, message.
std::string event_table(const std::vector<JsonValue>& events, const std::string& resource_version, int64_t now_unix_ms,
                        RowObject row = RowObject::kMetadata);
// Kubernetes' short ages: 45s, 3m12s, 5h, 2d.
std::string human_age(int64_t seconds);

}  // namespace uvsched
