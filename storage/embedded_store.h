// The zero-setup store: KvState in memory, made durable by an append-only log
// with group commit. Every operation is applied to memory at once; its
// callback (and any watch event it causes) waits for the loop turn's batch of
// log records to be written and fdatasync'ed on the threadpool, one batch at
// a time. Nothing is acknowledged before it is on disk.
//
// Files in DIR: LOCK (flock: one process per directory), snapshot (one framed
// record: log epoch + state), wal-<epoch>.log (records since that snapshot).
// A snapshot is taken when the log outgrows Options::compact_bytes; it starts
// a new epoch, so recovery never replays a record twice. The loop only
// freezes the state (pins its blocks, see KvTable::pin); the threadpool
// encodes and writes it a piece at a time, so it is never in memory twice.
//
// A write the disk refuses (full, or failing) is retried every second, its
// callbacks waiting, until it lands: meanwhile other writes are refused
// (unavailable, with the reason) and reads are answered at once (they may see
// the writes still waiting). Closing gives the waiting writes up, failed.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reactor/clock.h"
#include "reactor/next_turn.h"
#include "storage/kv_state.h"
#include "storage/store.h"
#include "storage/value_codec.h"

namespace uvsched {

class EmbeddedStore final : public Store {
 public:
  struct Options {
    size_t compact_bytes = 64 * 1024 * 1024;
    size_t history_limit = 10'000;        // events kept for watches that resume from the past
    size_t history_byte_limit = 2 << 20;  // ... and at most this many bytes of them (~2.5k pod events)
    std::string value_dictionary;         // values are packed in memory against it (ValueCodec)
  };

  // Recovers DIR (creating it), dropping a torn or corrupt log tail. Reads
  // files synchronously: call it at start-up, before the loop serves anyone.
  static std::unique_ptr<EmbeddedStore> open(uv_loop_t* loop, Clock& clock, const std::string& dir, std::string* error);
  static std::unique_ptr<EmbeddedStore> open(uv_loop_t* loop, Clock& clock, const std::string& dir, std::string* error,
                                             Options options);
  ~EmbeddedStore() override;

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
  int64_t revision() const override { return state_.revision(); }
  std::optional<std::string> unavailable_reason() const override;
  void close(std::function<void()> done) override;

  // For tests and metrics.
  size_t log_bytes() const { return log_bytes_; }
  int64_t epoch() const { return epoch_; }
  uint64_t commits() const { return commits_; }
  size_t value_bytes() const { return state_.packed_value_bytes(); }  // as held in memory

 private:
  struct Watcher {
    std::string prefix;
    int64_t next_revision;  // live events from here on
    WatchCallback cb;
  };
  struct Batch {
    std::vector<LogRecord> records;           // commit_work encodes them, off the loop
    std::string bytes;                        // the records encoded: appended to the log
    std::vector<std::function<void()>> acks;  // run once the bytes are durable
    std::unique_ptr<SnapshotView> snapshot;   // a compaction job: commit_work encodes, frames and writes it
    int log_fd = -1;                          // the fd to write (the new one after a snapshot)
    std::string dir;
    int64_t epoch = 0;
    int error = 0;
    size_t truncate_to = 0;  // a retry: the log's length before the failed write (a part of it may be there)
  };

  EmbeddedStore(uv_loop_t* loop, Clock& clock, std::string dir, Options options);
  bool recover(std::string* error);

  void enqueue(LogRecord* record, std::function<void()> ack);  // takes *record
  void log_and_publish(Applied&& applied, std::function<void()> ack);
  static void on_idle(uv_idle_t* h);
  void start_commit();
  static void commit_work(uv_work_t* req);
  static void commit_done(uv_work_t* req, int status);
  static void retry_work(uv_work_t* req);
  void retry_stalled();
  void give_up_stalled();
  void answer_directly();
  void publish(const std::vector<WatchEvent>& events);
  void arm_lease(int64_t id, int64_t ttl_seconds);
  void expire_lease(int64_t id);
  void maybe_finish_close();
  void maybe_start_packing();
  static void pack_work(uv_work_t* req);
  static void pack_done(uv_work_t* req, int status);

  uv_loop_t* loop_;
  Clock& clock_;
  std::string dir_;
  Options options_;
  KvState state_;
  int lock_fd_ = -1;
  int log_fd_ = -1;
  int64_t epoch_ = 0;
  size_t log_bytes_ = 0;
  uint64_t commits_ = 0;

  Batch open_;
  std::unique_ptr<Batch> inflight_;
  uv_work_t work_;
  // An idle handle, not a prepare handle: while it is active the loop polls
  // without blocking, so a batch queued by a callback (even by an ack) is
  // committed on the next turn instead of waiting for unrelated I/O.
  uv_idle_t idle_;
  bool idle_active_ = false;
  std::string broken_;  // set when a failed write was given up: nothing more is acknowledged
  // A write the disk refused, retried until it lands (the batch stays in
  // flight); while set, writes are refused and reads answered directly.
  std::string stalled_;
  std::unique_ptr<Timer> retry_timer_;
  bool retrying_ = false;  // a retry is on the thread pool
  std::vector<std::function<void()>> direct_acks_;
  std::unique_ptr<NextTurn> direct_turn_;

  // Packing values for memory (see KvState::take_settled) runs on the
  // threadpool beside the commits, one job at a time: the loop only copies
  // settled values out and the packed ones back in.
  struct PackWork {
    uv_work_t req;  // req.data: this
    EmbeddedStore* store;
    ValueCodec* codec;  // pack_codec_: only the job in flight uses it
    std::vector<KvState::PackJob> jobs;
  };
  std::unique_ptr<ValueCodec> pack_codec_;
  std::unique_ptr<PackWork> packing_;

  std::map<int64_t, std::unique_ptr<Timer>> lease_timers_;
  std::map<WatchId, Watcher> watchers_;
  WatchId next_watch_ = 1;

  bool closing_ = false;
  bool idle_closed_ = false;
  std::function<void()> close_done_;
};

}  // namespace uvsched
