#include "storage/embedded_store.h"

#include <cassert>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "reactor/log.h"
#include "storage/wal_codec.h"

namespace uvsched {
namespace {

namespace fs = std::filesystem;

std::string wal_name(const std::string& dir, int64_t epoch) { return dir + "/wal-" + std::to_string(epoch) + ".log"; }

// Start-up only (before the loop runs). Read straight into a buffer of the
// file's size: a stream would hold the file twice.
bool read_file(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out->size()) {
    ssize_t n = ::read(fd, out->data() + got, out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out->resize(got);
  ::close(fd);
  return true;
}

// Worker-thread helpers: plain blocking syscalls, never on the loop thread.
int write_all(int fd, std::string_view bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    off += static_cast<size_t>(n);
  }
  return 0;
}

int pwrite_all(int fd, std::string_view bytes, off_t at) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::pwrite(fd, bytes.data() + off, bytes.size() - off, at + static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    off += static_cast<size_t>(n);
  }
  return 0;
}

int fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

StoreStatus disk_failure(const std::string& why) { return StoreStatus::unavailable("embedded store: " + why); }

}  // namespace

EmbeddedStore::EmbeddedStore(uv_loop_t* loop, Clock& clock, std::string dir, Options options)
    : loop_(loop),
      clock_(clock),
      dir_(std::move(dir)),
      options_(options),
      state_(options.history_limit, options.history_byte_limit, options.value_dictionary) {}

std::unique_ptr<EmbeddedStore> EmbeddedStore::open(uv_loop_t* loop, Clock& clock, const std::string& dir,
                                                   std::string* error) {
  return open(loop, clock, dir, error, Options{});
}

std::unique_ptr<EmbeddedStore> EmbeddedStore::open(uv_loop_t* loop, Clock& clock, const std::string& dir,
                                                   std::string* error, Options options) {
  std::unique_ptr<EmbeddedStore> s(new EmbeddedStore(loop, clock, dir, options));
  if (!s->recover(error)) return nullptr;
  s->retry_timer_ = clock.new_timer();
  s->direct_turn_ = std::make_unique<NextTurn>(loop, [self = s.get()] { self->answer_directly(); });
  uv_idle_init(loop, &s->idle_);
  s->idle_.data = s.get();
  // Recovery packed as it replayed (nothing else was running); from now on
  // the threadpool does it.
  s->pack_codec_ = std::make_unique<ValueCodec>(s->state_.value_dictionary());
  s->state_.defer_packing(true);
  for (const auto& [id, ttl] : s->state_.leases()) s->arm_lease(id, ttl);
  return s;
}

EmbeddedStore::~EmbeddedStore() {
  // A write or packing job on the thread pool would finish into freed memory.
  assert(!inflight_ && !packing_ && "EmbeddedStore destroyed before close() finished");
  if (log_fd_ >= 0) ::close(log_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

bool EmbeddedStore::recover(std::string* error) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    *error = "cannot create " + dir_ + ": " + ec.message();
    return false;
  }
  lock_fd_ = ::open((dir_ + "/LOCK").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock_fd_ < 0 || flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    *error = dir_ + " is in use by another process (LOCK held)";
    return false;
  }

  std::string snapshot;
  if (read_file(dir_ + "/snapshot", &snapshot)) {
    std::string_view payload;
    size_t size;
    if (!read_frame(snapshot, &payload, &size)) {
      *error = dir_ + "/snapshot is corrupt; refusing to start without it";
      return false;
    }
    WalReader pr(payload);
    if (!pr.i64(&epoch_) || !state_.load_snapshot(payload.substr(8))) {
      *error = dir_ + "/snapshot cannot be decoded";
      return false;
    }
  }

  std::string log_path = wal_name(dir_, epoch_);
  std::string log;
  read_file(log_path, &log);
  LogScan decoded = scan_log(log, [this](const LogRecord& rec) { state_.replay(rec); });
  if (decoded.valid_bytes < log.size()) {
    log_warn("store_torn_tail_dropped")
        .kv("file", log_path)
        .kv("bytes", static_cast<uint64_t>(log.size() - decoded.valid_bytes));
    if (::truncate(log_path.c_str(), static_cast<off_t>(decoded.valid_bytes)) != 0) {
      *error = "cannot truncate " + log_path + ": " + strerror(errno);
      return false;
    }
  }
  log_fd_ = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd_ < 0) {
    *error = "cannot open " + log_path + ": " + strerror(errno);
    return false;
  }
  log_bytes_ = decoded.valid_bytes;

  // Logs of older epochs are wholly inside the snapshot.
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("wal-", 0) == 0 && entry.path().string() != log_path) fs::remove(entry.path(), ec);
  }
  fs::remove(dir_ + "/snapshot.tmp", ec);
  log_info("store_recovered")
      .kv("dir", dir_)
      .kv("revision", state_.revision())
      .kv("keys", static_cast<uint64_t>(state_.key_count()))
      .kv("records", static_cast<uint64_t>(decoded.records));
  return true;
}

std::optional<std::string> EmbeddedStore::unavailable_reason() const {
  if (!broken_.empty()) return broken_;
  if (!stalled_.empty()) return stalled_;
  if (closing_) return std::string("store is closing");
  return std::nullopt;
}

// ---- group commit -----------------------------------------------------------

void EmbeddedStore::enqueue(LogRecord* record, std::function<void()> ack) {
  if (!stalled_.empty() && (record == nullptr || record->mutations.empty())) {
    // A read or a refusal does not wait for a write that may not land for minutes.
    direct_acks_.push_back(std::move(ack));
    direct_turn_->schedule();
    return;
  }
  if (record != nullptr && !record->mutations.empty()) open_.records.push_back(std::move(*record));
  open_.acks.push_back(std::move(ack));
  // While a batch is being written, its commit_done starts the next one; the
  // loop is free to block in poll until then.
  if (!idle_active_ && !inflight_) {
    // Runs on the next loop turn, after this turn's callbacks: the whole
    // turn's writes become one write + one fdatasync.
    uv_idle_start(&idle_, &EmbeddedStore::on_idle);
    idle_active_ = true;
  }
}

void EmbeddedStore::on_idle(uv_idle_t* h) {
  auto* self = static_cast<EmbeddedStore*>(h->data);
  // Nothing arrived since the last turn, or a batch is still being written
  // (commit_done takes what is open): let the loop block again. Staying
  // active through a write spun the loop on empty polls for the whole
  // fdatasync, a sixth of its CPU under load.
  if (self->inflight_ || (self->open_.acks.empty() && self->open_.records.empty() && !self->open_.snapshot)) {
    uv_idle_stop(h);
    self->idle_active_ = false;
    self->maybe_finish_close();
    return;
  }
  // Stays active one more turn, so callbacks run now are followed by a
  // non-blocking poll rather than a wait for unrelated I/O.
  self->start_commit();
}

void EmbeddedStore::answer_directly() {
  auto acks = std::move(direct_acks_);
  direct_acks_.clear();
  for (auto& ack : acks) ack();
}

void EmbeddedStore::start_commit() {
  maybe_start_packing();
  if (inflight_) return;  // commit_done starts the next batch
  if (!broken_.empty() && (!open_.records.empty() || open_.snapshot)) {
    // Given up (closing after a failure): nothing more goes to the disk.
    if (open_.snapshot) state_.release_snapshot();
    open_.snapshot.reset();
    open_.records.clear();
  }
  if (open_.acks.empty() && open_.records.empty() && !open_.snapshot) {
    maybe_finish_close();
    return;
  }
  if (open_.records.empty() && !open_.snapshot) {
    // Only reads and failures: nothing to make durable, answer now.
    auto acks = std::move(open_.acks);
    open_.acks.clear();
    for (auto& ack : acks) ack();
    maybe_finish_close();
    return;
  }
  inflight_ = std::make_unique<Batch>(std::move(open_));
  open_ = Batch{};
  inflight_->log_fd = log_fd_;
  inflight_->dir = dir_;
  work_.data = this;
  uv_queue_work(loop_, &work_, &EmbeddedStore::commit_work, &EmbeddedStore::commit_done);
}

void EmbeddedStore::commit_work(uv_work_t* req) {
  auto* self = static_cast<EmbeddedStore*>(req->data);
  Batch& b = *self->inflight_;  // the loop thread does not touch it while in flight
  if (b.snapshot) {
    std::string tmp = b.dir + "/snapshot.tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      b.error = errno;
      return;
    }
    // Off the loop: the state is encoded from its pinned blocks a piece at a
    // time, so it is never whole in memory a second time; the frame's header,
    // which needs the CRC of it all, goes in its place at the start last.
    const SnapshotView& view = *b.snapshot;
    uint32_t crc = 0;
    b.error = write_all(fd, std::string(frame_header(0, 0).size(), '\0'));
    if (b.error == 0) {
      view.encode(64 << 10, [&](std::string_view piece) {  // small: a thread arena keeps what it held
        crc = crc_extend(crc, piece);
        b.error = write_all(fd, piece);
        return b.error == 0;
      });
    }
    if (b.error == 0) b.error = pwrite_all(fd, frame_header(view.size(), crc), 0);
    if (b.error == 0 && ::fsync(fd) != 0) b.error = errno;
    ::close(fd);
    if (b.error == 0 && ::rename(tmp.c_str(), (b.dir + "/snapshot").c_str()) != 0) b.error = errno;
    if (b.error == 0) b.error = fsync_dir(b.dir);
    if (b.error != 0) return;
    // The snapshot names the new epoch: from now on only the new log counts.
    int nfd = ::open(wal_name(b.dir, b.epoch).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (nfd < 0) {
      b.error = errno;
      return;
    }
    b.log_fd = nfd;
    fsync_dir(b.dir);
    ::unlink(wal_name(b.dir, b.epoch - 1).c_str());
  }
  // Encoding and checksumming the records is a few percent of a busy loop's
  // time: done here, the loop only hands over what it applied.
  for (const LogRecord& r : b.records) b.bytes += encode_record(r);
  b.records = {};
  if (!b.bytes.empty()) {
    b.error = write_all(b.log_fd, b.bytes);
    if (b.error == 0 && ::fdatasync(b.log_fd) != 0) b.error = errno;
  }
}

void EmbeddedStore::commit_done(uv_work_t* req, int) {
  auto* self = static_cast<EmbeddedStore*>(req->data);
  self->retrying_ = false;
  if (int err = self->inflight_->error; err != 0 && !self->closing_) {
    // Kept in flight, its acks waiting, and tried again in a second.
    if (self->stalled_.empty()) {
      log_error("store_write_failed")
          .kv("dir", self->dir_)
          .kv("error", strerror(err))
          .kv("then", "writes are refused and this one retried every second until it lands; reads go on");
    }
    self->stalled_ =
        std::string("disk write failed (") + strerror(err) + "); writes are refused until it can be written";
    self->retry_timer_->start(1000, [self] { self->retry_stalled(); });
    return;
  }
  std::unique_ptr<Batch> b = std::move(self->inflight_);
  if (b->error != 0) {
    self->broken_ = std::string("disk write failed: ") + strerror(b->error);
    log_error("store_write_given_up").kv("dir", self->dir_).kv("error", strerror(b->error));
  } else {
    if (!self->stalled_.empty()) {
      log_info("store_write_recovered").kv("dir", self->dir_);
      self->stalled_.clear();
    }
    if (b->snapshot) {
      ::close(self->log_fd_);
      self->log_fd_ = b->log_fd;
      self->epoch_ = b->epoch;
      self->log_bytes_ = 0;
      log_info("store_snapshot").kv("epoch", b->epoch).kv("bytes", static_cast<uint64_t>(b->snapshot->size()));
    }
    self->log_bytes_ += b->bytes.size();
    ++self->commits_;
  }
  if (b->snapshot) self->state_.release_snapshot();  // written or not, its blocks are free to go

  if (self->broken_.empty() && self->log_bytes_ > self->options_.compact_bytes) {
    // The snapshot holds every applied write, so the open batch's records are
    // not needed in the log: its acks ride on the snapshot's durability.
    // The loop only freezes the state (pins its blocks); commit_work encodes it.
    WalWriter w;
    w.i64(self->epoch_ + 1);
    self->open_.snapshot = self->state_.freeze_snapshot(w.take());
    self->open_.records.clear();
    self->open_.epoch = self->epoch_ + 1;
  }
  // Writes that queued behind this batch go to disk before its acks run, so
  // their fdatasync overlaps the answers (a third of a commit cycle under
  // load). Reads that queued behind it are answered after its writes are.
  bool writes_waiting = !self->open_.records.empty() || self->open_.snapshot;
  if (writes_waiting) self->start_commit();
  for (auto& ack : b->acks) ack();  // acks check broken_ to tell success from failure
  b.reset();
  if (!writes_waiting) self->start_commit();
}

void EmbeddedStore::retry_stalled() {
  if (!inflight_ || retrying_ || closing_) return;
  Batch& b = *inflight_;
  b.error = 0;
  b.truncate_to = log_bytes_;
  if (b.snapshot && b.log_fd != log_fd_) {  // the new epoch's log, from the try that failed
    ::close(b.log_fd);
    b.log_fd = log_fd_;
  }
  retrying_ = true;
  work_.data = this;
  uv_queue_work(loop_, &work_, &EmbeddedStore::retry_work, &EmbeddedStore::commit_done);
}

// What a failed append left of itself is cut off first: the log then ends
// where its last durable record did, and the batch goes on again whole.
void EmbeddedStore::retry_work(uv_work_t* req) {
  auto* self = static_cast<EmbeddedStore*>(req->data);
  Batch& b = *self->inflight_;
  if (!b.snapshot && ::ftruncate(b.log_fd, static_cast<off_t>(b.truncate_to)) != 0) {
    b.error = errno;
    return;
  }
  commit_work(req);
}

// Closing while a write waits: it is answered as failed (it was never made
// durable), and so is everything after it.
void EmbeddedStore::give_up_stalled() {
  retry_timer_->stop();
  broken_ = stalled_;
  stalled_.clear();
  std::unique_ptr<Batch> b = std::move(inflight_);
  if (b->snapshot) {
    state_.release_snapshot();
    if (b->log_fd != log_fd_) ::close(b->log_fd);
  }
  log_error("store_write_given_up").kv("dir", dir_).kv("error", broken_);
  for (auto& ack : b->acks) ack();
  answer_directly();
  start_commit();
}

void EmbeddedStore::maybe_start_packing() {
  // At least kPackBatch values a job: each job costs the loop a hand-over to
  // a worker and a wake-up back, which a few values would not repay.
  constexpr size_t kPackBatch = 64;
  if (packing_ || closing_ || !state_.has_settled(KvState::kRawBacklog + kPackBatch)) return;
  packing_ = std::make_unique<PackWork>();
  packing_->codec = pack_codec_.get();
  packing_->jobs = state_.take_settled();
  packing_->store = this;
  packing_->req.data = packing_.get();
  uv_queue_work(loop_, &packing_->req, &EmbeddedStore::pack_work, &EmbeddedStore::pack_done);
}

void EmbeddedStore::pack_work(uv_work_t* req) {
  auto* w = static_cast<PackWork*>(req->data);
  for (auto& job : w->jobs) {
    job.packed = w->codec->pack(job.value);
    std::string().swap(job.value);
  }
}

void EmbeddedStore::pack_done(uv_work_t* req, int) {
  auto* self = static_cast<PackWork*>(req->data)->store;
  std::unique_ptr<PackWork> w = std::move(self->packing_);
  self->state_.install_packed(w->jobs);
  w.reset();
  self->maybe_start_packing();
  self->maybe_finish_close();
}

void EmbeddedStore::maybe_finish_close() {
  if (!closing_ || inflight_ || packing_ || idle_closed_ || !open_.acks.empty() || !open_.records.empty()) return;
  idle_closed_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), [](uv_handle_t* h) {
    auto* self = static_cast<EmbeddedStore*>(h->data);
    ::close(self->log_fd_);
    self->log_fd_ = -1;
    ::close(self->lock_fd_);
    self->lock_fd_ = -1;
    if (auto done = std::move(self->close_done_)) done();
  });
}

void EmbeddedStore::close(std::function<void()> done) {
  if (closing_) return;
  closing_ = true;
  close_done_ = std::move(done);
  lease_timers_.clear();
  watchers_.clear();
  if (inflight_ && !stalled_.empty() && !retrying_)
    return give_up_stalled();  // (a retry under way ends in commit_done)
  start_commit();
}

// ---- operations --------------------------------------------------------------

void EmbeddedStore::log_and_publish(Applied&& applied, std::function<void()> ack) {
  enqueue(&applied.record, [this, events = std::move(applied.events), ack = std::move(ack)] {
    if (broken_.empty()) publish(events);
    ack();
  });
}

void EmbeddedStore::get(std::string key, RangeOptions options, RangeCallback cb) {
  auto result = std::make_shared<RangeResult>(state_.range(key, options));
  // Stalled on a write the disk refused, reads go on.
  if (!broken_.empty() || closing_)
    result->status = StoreStatus::unavailable(!broken_.empty() ? broken_ : "store is closing");
  enqueue(nullptr, [result, cb = std::move(cb)] { cb(std::move(*result)); });
}

void EmbeddedStore::put(std::string key, std::string value, int64_t lease, WriteCallback cb) {
  if (auto why = unavailable_reason()) {
    enqueue(nullptr, [cb = std::move(cb), why = *why] { cb(WriteResult{StoreStatus::unavailable(why)}); });
    return;
  }
  Applied a = state_.put(key, value, lease);
  auto result = std::make_shared<WriteResult>(WriteResult{a.status, a.revision, std::move(a.prev_kvs), 0});
  log_and_publish(std::move(a), [this, result, cb = std::move(cb)] {
    if (!broken_.empty()) result->status = disk_failure(broken_);
    cb(std::move(*result));
  });
}

void EmbeddedStore::del(std::string key, bool prefix, WriteCallback cb) {
  if (auto why = unavailable_reason()) {
    enqueue(nullptr, [cb = std::move(cb), why = *why] { cb(WriteResult{StoreStatus::unavailable(why)}); });
    return;
  }
  Applied a = state_.del(key, prefix);
  auto result = std::make_shared<WriteResult>(WriteResult{a.status, a.revision, std::move(a.prev_kvs), a.deleted});
  log_and_publish(std::move(a), [this, result, cb = std::move(cb)] {
    if (!broken_.empty()) result->status = disk_failure(broken_);
    cb(std::move(*result));
  });
}

void EmbeddedStore::txn(TxnRequest request, TxnCallback cb) {
  if (auto why = unavailable_reason()) {
    enqueue(nullptr, [cb = std::move(cb), why = *why] { cb(TxnResult{StoreStatus::unavailable(why)}); });
    return;
  }
  auto result = std::make_shared<TxnResult>();
  Applied a = state_.txn(std::move(request), &result->succeeded, &result->ranges);
  result->status = a.status;
  result->revision = a.revision;
  log_and_publish(std::move(a), [this, result, cb = std::move(cb)] {
    if (!broken_.empty()) result->status = disk_failure(broken_);
    cb(std::move(*result));
  });
}

// Delete events carry their value either way: here it costs nothing to keep.
Store::WatchId EmbeddedStore::watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool) {
  WatchId id = next_watch_++;
  int64_t now = state_.revision();
  if (start_revision <= 0 || start_revision > now) {
    watchers_[id] = Watcher{std::move(prefix), std::max(start_revision, now + 1), std::move(cb)};
    return id;
  }
  auto past = state_.history(prefix, start_revision);
  watchers_[id] = Watcher{prefix, now + 1, cb};
  auto events = std::make_shared<std::vector<WatchEvent>>(past ? std::move(*past) : std::vector<WatchEvent>{});
  bool compacted = !past;
  enqueue(nullptr, [this, id, events, compacted] {
    auto it = watchers_.find(id);
    if (it == watchers_.end()) return;
    if (compacted) {
      WatchCallback w = std::move(it->second.cb);
      watchers_.erase(it);
      w(StoreStatus{StoreCode::kCompacted, "requested revision is no longer kept"}, {});
      return;
    }
    if (!events->empty()) it->second.cb(StoreStatus{}, *events);
  });
  return id;
}

void EmbeddedStore::cancel_watch(WatchId id) { watchers_.erase(id); }

void EmbeddedStore::publish(const std::vector<WatchEvent>& events) {
  if (events.empty() || watchers_.empty()) return;
  std::vector<WatchId> ids;
  for (const auto& [id, w] : watchers_) ids.push_back(id);
  for (WatchId id : ids) {
    auto it = watchers_.find(id);  // an earlier callback may have cancelled it
    if (it == watchers_.end()) continue;
    auto wanted = [&](const WatchEvent& e) {
      return e.kv.mod_revision >= it->second.next_revision && has_prefix(e.kv.key, it->second.prefix);
    };
    WatchCallback cb = it->second.cb;  // the callback may cancel its own watch
    if (std::all_of(events.begin(), events.end(), wanted)) {
      // The usual case (one watch on the prefix written): no copy of the values.
      it->second.next_revision = events.back().kv.mod_revision + 1;
      cb(StoreStatus{}, events);
      continue;
    }
    std::vector<WatchEvent> mine;
    for (const auto& e : events) {
      if (wanted(e)) mine.push_back(e);
    }
    if (mine.empty()) continue;
    it->second.next_revision = mine.back().kv.mod_revision + 1;
    cb(StoreStatus{}, mine);
  }
}

// ---- leases ------------------------------------------------------------------

void EmbeddedStore::arm_lease(int64_t id, int64_t ttl_seconds) {
  auto& t = lease_timers_[id];
  if (!t) t = clock_.new_timer();
  t->start(static_cast<uint64_t>(ttl_seconds) * 1000, [this, id] { expire_lease(id); });
}

void EmbeddedStore::expire_lease(int64_t id) {
  lease_timers_.erase(id);
  if (!state_.lease_exists(id) || closing_) return;
  log_info("lease_expired").kv("lease", id);
  log_and_publish(state_.lease_revoke(id), [] {});
}

void EmbeddedStore::lease_grant(int64_t ttl_seconds, LeaseCallback cb) {
  if (ttl_seconds <= 0) {
    enqueue(nullptr, [cb = std::move(cb)] { cb(LeaseResult{{StoreCode::kInvalid, "ttl must be > 0"}}); });
    return;
  }
  if (auto why = unavailable_reason()) {
    enqueue(nullptr, [cb = std::move(cb), why = *why] { cb(LeaseResult{StoreStatus::unavailable(why)}); });
    return;
  }
  Applied a = state_.lease_grant(ttl_seconds);
  int64_t id = a.lease_id;
  arm_lease(id, ttl_seconds);
  log_and_publish(std::move(a), [this, id, ttl_seconds, cb = std::move(cb)] {
    LeaseResult r{{}, id, ttl_seconds};
    if (!broken_.empty()) r.status = disk_failure(broken_);
    cb(std::move(r));
  });
}

void EmbeddedStore::lease_keepalive(int64_t id, LeaseCallback cb) {
  const bool exists = state_.lease_exists(id);
  const int64_t ttl = state_.lease_ttl(id);
  if (exists) arm_lease(id, ttl);
  enqueue(nullptr, [id, ttl, exists, cb = std::move(cb)] {
    LeaseResult r{{}, id, ttl};
    if (!exists) r.status = {StoreCode::kNotFound, "lease not found"};
    cb(std::move(r));
  });
}

void EmbeddedStore::lease_revoke(int64_t id, LeaseCallback cb) {
  Applied a = state_.lease_revoke(id);
  LeaseResult r{a.status, id, 0};
  if (!a.status.ok()) {
    enqueue(nullptr, [r, cb = std::move(cb)]() mutable { cb(std::move(r)); });
    return;
  }
  lease_timers_.erase(id);
  log_and_publish(std::move(a), [this, r, cb = std::move(cb)]() mutable {
    if (!broken_.empty()) r.status = disk_failure(broken_);
    cb(std::move(r));
  });
}

}  // namespace uvsched
