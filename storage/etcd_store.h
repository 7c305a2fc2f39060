// The store on a real etcd through its v3 JSON gateway (etcd 3.4), on the
// reactor's HTTP client: no thread, no blocking call. Handles the gateway's
// quirks: base64 keys and values, int64s as strings, fields at their default
// left out, prefix ranges as range_end, newline-delimited streams for watch
// and keep-alive. Writes issued in one loop turn go out as one txn (up to 128
// ops). Any endpoint may answer; a failed one is skipped for the next. A
// read is sent to each in turn; a write only if it surely did not reach the
// one before (else kUnavailable: it may or may not have been applied). When
// none answers, calls fail fast with kUnavailable and a probe reconnects with
// backoff. A periodic status call keeps unavailable_reason() current.
#pragma once

#include <simdjson.h>
#include <uv.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reactor/clock.h"
#include "reactor/http_client.h"
#include "reactor/url.h"
#include "storage/etcd_values.h"
#include "storage/store.h"

namespace uvsched {

class EtcdStore final : public Store {
 public:
  // Connections to the endpoint in use, at most: requests (etcd batches
  // concurrent ones into one raft round, so many may be in flight) and
  // watches (one stream each).
  static constexpr size_t kRequestConnections = 256;
  static constexpr size_t kWatchConnections = 4096;

  struct Options {
    uint64_t request_timeout_ms = 2'000;
    uint64_t reconnect_min_ms = 100;
    uint64_t reconnect_max_ms = 5'000;
    uint64_t health_interval_ms = 1'000;                // readiness follows etcd even when nothing else talks to it
    std::shared_ptr<const TlsContext> tls;              // https endpoints: verify etcd with it (null: the system's CAs)
    std::string value_dictionary;                       // typical values, to pack against (see EtcdValues)
    std::vector<std::string> older_value_dictionaries;  // values packed against these are read too
    bool pack_values = true;                            // false: write values plainly (both forms are always read)
  };

  EtcdStore(uv_loop_t* loop, Clock& clock, std::vector<Url> endpoints, Options options);
  EtcdStore(uv_loop_t* loop, Clock& clock, std::vector<Url> endpoints)
      : EtcdStore(loop, clock, std::move(endpoints), Options{}) {}
  ~EtcdStore() override;

  void get(std::string key, RangeOptions options, RangeCallback cb) override;
  void put(std::string key, std::string value, int64_t lease, WriteCallback cb) override;
  void del(std::string key, bool prefix, WriteCallback cb) override;
  void txn(TxnRequest request, TxnCallback cb) override;
  using Store::watch;
  WatchId watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool deleted_values) override;
  void cancel_watch(WatchId id) override;
  void lease_grant(int64_t ttl_seconds, LeaseCallback cb) override;
  void lease_keepalive(int64_t id, LeaseCallback cb) override;
  void lease_revoke(int64_t id, LeaseCallback cb) override;
  int64_t revision() const override { return revision_; }
  std::optional<std::string> unavailable_reason() const override { return down_reason_; }
  void close(std::function<void()> done) override;
  void set_write_fence(Compare fence) override { fence_ = std::move(fence); }

 private:
  using JsonCallback = std::function<void(const StoreStatus&, simdjson::dom::element)>;
  // Adds the fence's compare, and a read of its key to the failure branch so
  // a failed txn tells a failed fence from a failed compare of the caller's.
  // True when it was added.
  bool add_fence(TxnRequest& t) const;
  // For a fenced txn that did not succeed: true (and the read taken off the
  // result) when it was the fence that failed.
  bool fence_failed(TxnResult& r) const;
  std::optional<Compare> fence_;
  struct PendingWrite {
    TxnOp op;
    WriteCallback cb;
  };
  struct Watch;

  // POSTs to the member in use; on a failure, to the next, up to
  // attempts_left members (writes: see maybe_applied in call()).
  void call(const std::string& path, std::string body, JsonCallback cb, size_t attempts_left);
  void send_txn(std::string body, std::function<void(const StoreStatus&, TxnResult&&, simdjson::dom::element)> cb);
  void queue_write(TxnOp op, WriteCallback cb);
  void flush_writes();
  struct PendingTxn {
    TxnRequest request;
    TxnCallback cb;
  };
  void flush_txns();
  void send_txn_group(std::vector<PendingTxn> group);
  void send_txn_alone(PendingTxn t);
  void send_write_batch(std::vector<PendingWrite> batch);
  void start_watch(Watch* w);
  void on_watch_line(Watch* w, std::string_view line);
  void restart_watch(Watch* w);
  // A value as it is in etcd, back to what was put (see EtcdValues).
  void decode_value(KeyValue& kv);
  void mark_down(const std::string& why);
  void mark_up();
  void probe();
  void schedule_probe();
  void note_revision(simdjson::dom::element obj);
  static void on_idle(uv_idle_t* h);

  Clock& clock_;
  std::vector<Url> endpoints_;
  Options options_;
  EtcdValues values_;
  bool told_unreadable_ = false;  // logged once: every read of such values would say it again
  size_t current_ = 0;
  HttpClient client_;
  HttpClient stream_client_;  // watches and keep-alives hold a connection each
  simdjson::dom::parser parser_;
  int64_t revision_ = 0;
  std::optional<std::string> down_reason_;
  std::unique_ptr<Timer> probe_timer_;
  uint64_t probe_backoff_ms_ = 0;

  std::vector<PendingWrite> pending_writes_;
  std::vector<PendingTxn> pending_txns_;  // compare-and-writes of this turn, sent together
  uv_idle_t idle_;
  bool idle_active_ = false;
  // Write txns on their way. Beyond a few, new writes wait and the next txn
  // carries all of them: under load each raft round then serves hundreds of
  // writes instead of a turn's handful (etcd's cost is per request more than
  // per op); when idle, a write still leaves on the next turn.
  size_t txns_in_flight_ = 0;
  void arm_flush();

  std::map<WatchId, std::unique_ptr<Watch>> watches_;
  WatchId next_watch_ = 1;
  bool closing_ = false;
};

// "etcd:http://h1:p1,http://h2:p2" -> endpoints; false on a malformed list.
bool parse_etcd_endpoints(const std::string& list, std::vector<Url>* out);

}  // namespace uvsched
