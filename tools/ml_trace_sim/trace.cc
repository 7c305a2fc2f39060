#include "tools/ml_trace_sim/trace.h"

#include <cctype>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "tools/cli_numbers.h"

namespace uvsched::sim {

namespace {

// More replicas than any measured curve has by far; a bound so that a typo
// cannot make the simulator allocate a curve of billions of points.
constexpr int kMaxReplicas = 100'000;

// A CSV file's rows after its header, and where each came from, for errors.
struct CsvRow {
  std::vector<std::string> cells;
  std::string where;  // "path:line"
};

bool read_csv(const std::string& path, size_t min_cells, std::vector<CsvRow>* rows, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  std::getline(in, line);  // the header
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    CsvRow row;
    row.where = path + ":" + std::to_string(number);
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) row.cells.push_back(cell);
    if (row.cells.size() < min_cells) {
      *error =
          row.where + ": " + std::to_string(row.cells.size()) + " columns, want at least " + std::to_string(min_cells);
      return false;
    }
    rows->push_back(std::move(row));
  }
  return true;
}

// Reads rows' numbers, remembering the first that is not one.
class Cells {
 public:
  explicit Cells(std::string* error) : error_(error) {}
  int whole(const CsvRow& r, size_t column, const char* name, int lo, int hi = 1'000'000'000) {
    int v = 0;
    if (!cli::parse_int(r.cells[column], lo, &v) || v > hi)
      fail(r, name, r.cells[column], "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v;
  }
  double number(const CsvRow& r, size_t column, const char* name, double lo, bool above_lo) {
    double v = 0;
    if (!cli::parse_double(r.cells[column], lo, &v) || (above_lo && v == lo))
      fail(r, name, r.cells[column], std::string("a number ") + (above_lo ? "> " : ">= ") + std::to_string(lo));
    return v;
  }
  bool ok() const { return ok_; }

 private:
  void fail(const CsvRow& r, const char* name, const std::string& got, const std::string& want) {
    if (!ok_) return;
    ok_ = false;
    *error_ = r.where + ": " + name + " is \"" + got + "\", want " + want;
  }
  std::string* error_;
  bool ok_ = true;
};

// Names go into the JSON bodies the simulator sends and the CSVs it writes,
// unescaped: letters, digits, '.', '_' and '-' only.
bool plain_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool check_names(const std::vector<CsvRow>& rows, std::initializer_list<std::pair<size_t, const char*>> columns,
                 std::string* error) {
  for (const auto& r : rows) {
    for (auto [column, name] : columns) {
      if (!plain_name(r.cells[column])) {
        *error = r.where + ": " + name + " is \"" + r.cells[column] + "\", want letters, digits, '.', '_' or '-'";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<Trace> load_trace(const std::string& dir, std::string* error) {
  Trace t;
  std::vector<CsvRow> workload, epochs, scaling;
  // workload.csv: name,submit_seconds,application,initial_replicas,batch_size
  // epochs.csv: application,epochs_to_finish,...
  // scaling_by_batch_size.csv: application,nominal_batch_size,replicas,epoch_seconds,sim_epoch_seconds,...
  if (!read_csv(dir + "/workload.csv", 5, &workload, error) || !read_csv(dir + "/epochs.csv", 2, &epochs, error) ||
      !read_csv(dir + "/scaling_by_batch_size.csv", 5, &scaling, error))
    return std::nullopt;
  if (!check_names(workload, {{0, "name"}, {2, "application"}}, error) ||
      !check_names(epochs, {{0, "application"}}, error) || !check_names(scaling, {{0, "application"}}, error))
    return std::nullopt;
  Cells cells(error);
  for (const auto& r : workload) {
    t.jobs.push_back({r.cells[0], cells.number(r, 1, "submit_seconds", 0, false), r.cells[2],
                      cells.whole(r, 3, "initial_replicas", 1, kMaxReplicas), cells.whole(r, 4, "batch_size", 1)});
  }
  for (const auto& r : epochs) t.epochs[r.cells[0]] = cells.whole(r, 1, "epochs_to_finish", 1);
  for (const auto& r : scaling) {
    int batch = cells.whole(r, 1, "nominal_batch_size", 1);
    int replicas = cells.whole(r, 2, "replicas", 1, kMaxReplicas);
    double seconds = cells.number(r, 4, "sim_epoch_seconds", 0, true);
    if (!cells.ok()) break;
    auto& curve = t.curves[{r.cells[0], batch}];
    if (curve.size() < static_cast<size_t>(replicas)) curve.resize(replicas, 0);
    curve[replicas - 1] = seconds;
  }
  if (!cells.ok()) return std::nullopt;
  if (t.jobs.empty()) {
    *error = dir + "/workload.csv has no jobs";
    return std::nullopt;
  }
  for (const auto& j : t.jobs) {
    auto curve = t.curves.find({j.app, j.batch});
    if (curve == t.curves.end() || !t.epochs.count(j.app)) {
      *error =
          "no curve or epoch count for " + j.app + " at batch " + std::to_string(j.batch) + " (job " + j.name + ")";
      return std::nullopt;
    }
    for (size_t k = 0; k < curve->second.size(); ++k) {
      if (curve->second[k] == 0) {
        *error = "the curve of " + j.app + " at batch " + std::to_string(j.batch) + " has no time at " +
                 std::to_string(k + 1) + " replicas";
        return std::nullopt;
      }
    }
  }
  return t;
}

}  // namespace uvsched::sim
