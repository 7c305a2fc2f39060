// What only the embedded store has: its files. Recovery after torn and
// corrupt tails, snapshots, the directory lock, and SIGKILL mid-storm.
#include "storage/embedded_store.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "tests/support/loop_runner.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

class EmbeddedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    uv_loop_init(&loop_);
    clock_ = std::make_unique<LoopClock>(&loop_);
    dir_ = tmp_.path() + "/data";
  }
  void TearDown() override {
    close();
    clock_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  std::unique_ptr<EmbeddedStore> open(EmbeddedStore::Options o = {}) {
    std::string error;
    auto s = EmbeddedStore::open(&loop_, *clock_, dir_, &error, o);
    EXPECT_TRUE(s) << error;
    return s;
  }
  void close() {
    if (!store_) return;
    bool closed = false;
    store_->close([&] { closed = true; });
    ASSERT_TRUE(run_until(&loop_, [&] { return closed; }));
    store_.reset();
  }
  WriteResult put(const std::string& k, const std::string& v) {
    std::optional<WriteResult> out;
    store_->put(k, v, 0, [&](WriteResult&& r) { out = std::move(r); });
    EXPECT_TRUE(run_until(&loop_, [&] { return out.has_value(); }));
    return out ? std::move(*out) : WriteResult{};
  }
  std::vector<KeyValue> list(const std::string& prefix) {
    std::optional<RangeResult> out;
    RangeOptions o;
    o.prefix = true;
    store_->get(prefix, o, [&](RangeResult&& r) { out = std::move(r); });
    EXPECT_TRUE(run_until(&loop_, [&] { return out.has_value(); }));
    return out ? out->kvs : std::vector<KeyValue>{};
  }
  std::string wal_path(int64_t epoch = 0) { return dir_ + "/wal-" + std::to_string(epoch) + ".log"; }

  TempDir tmp_;
  std::string dir_;
  uv_loop_t loop_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<EmbeddedStore> store_;
};

TEST_F(EmbeddedStoreTest, ValuesArePackedOffTheLoopAndReadBackWhole) {
  std::string pod = R"({"kind":"Pod","metadata":{"name":"web-0000","namespace":"default"},"spec":{"containers":[]}})";
  EmbeddedStore::Options o;
  o.value_dictionary = pod + pod;
  store_ = open(o);
  // Fired together, as a busy scheduler's writes are: the packing jobs run
  // on the threadpool while later commits go on.
  const size_t n = 3 * KvState::kRawBacklog;
  size_t acked = 0;
  auto value = [&](size_t i) {
    std::string v = pod, id = std::to_string(10000 + i).substr(1);
    return v.replace(v.find("0000"), 4, id);
  };
  for (size_t i = 0; i < n; ++i) {
    store_->put("/p/" + std::to_string(i), value(i), 0, [&](WriteResult&& r) { acked += r.status.ok(); });
  }
  ASSERT_TRUE(run_until(&loop_, [&] { return acked == n; }));
  size_t raw_bytes = n * (1 + pod.size());
  // Packing may finish a turn or two after the acks: wait for it, with a deadline.
  EXPECT_TRUE(run_until(&loop_, [&] { return store_->value_bytes() < raw_bytes / 2; }))
      << store_->value_bytes() << " bytes held for " << raw_bytes << " raw";
  auto kvs = list("/p/");
  ASSERT_EQ(kvs.size(), n);
  std::set<std::string> seen;
  for (const auto& kv : kvs) seen.insert(kv.value);
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(seen.count(value(i))) << i;
}

// While a batch is being written, the loop waits for it in poll: a put
// queued behind it costs a few loop turns, not one per pass of a spin for as
// long as the write and its fdatasync take.
TEST_F(EmbeddedStoreTest, APutQueuedBehindABatchBeingWrittenDoesNotSpinTheLoop) {
  store_ = open();
  int acked = 0;
  auto ack = [&](WriteResult&& r) { acked += r.status.ok(); };
  // Megabytes, so the write takes milliseconds even on tmpfs.
  for (int i = 0; i < 8; ++i) store_->put("/big/" + std::to_string(i), std::string(1 << 20, 'a' + i), 0, ack);
  uv_run(&loop_, UV_RUN_NOWAIT);  // its turn hands the batch to a worker
  store_->put("/small", "v", 0, ack);

  uv_prepare_t turn;
  uint64_t turns = 0;
  uv_prepare_init(&loop_, &turn);
  turn.data = &turns;
  uv_prepare_start(&turn, [](uv_prepare_t* h) { ++*static_cast<uint64_t*>(h->data); });
  ASSERT_TRUE(run_until(&loop_, [&] { return acked == 9; }));
  uv_close(reinterpret_cast<uv_handle_t*>(&turn), nullptr);
  uv_run(&loop_, UV_RUN_NOWAIT);  // the handle lives on this frame: finish closing it here
  EXPECT_LT(turns, 20u) << "loop turns while two batches were written";
}

TEST_F(EmbeddedStoreTest, TornTailIsDroppedAndWritesGoOn) {
  store_ = open();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(put("/k/" + std::to_string(i), "v").status.ok());
  close();
  auto full = std::filesystem::file_size(wal_path());
  std::filesystem::resize_file(wal_path(), full - 5);  // the last record loses its end
  store_ = open();
  EXPECT_EQ(list("/k/").size(), 9u);
  ASSERT_TRUE(put("/k/new", "v").status.ok());
  close();
  store_ = open();
  EXPECT_EQ(list("/k/").size(), 10u);
}

TEST_F(EmbeddedStoreTest, GarbageAppendedToTheLogDoesNotStopStartUp) {
  store_ = open();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(put("/g/" + std::to_string(i), "v").status.ok());
  close();
  {
    std::ofstream out(wal_path(), std::ios::app | std::ios::binary);
    out << std::string("\x10\x00\x00\x00garbage-that-is-not-a-record", 32);
  }
  store_ = open();
  EXPECT_EQ(list("/g/").size(), 5u);
}

TEST_F(EmbeddedStoreTest, AFlippedByteInARecordEndsRecoveryThere) {
  store_ = open();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(put("/f/" + std::to_string(i), "value").status.ok());
  close();
  {
    std::fstream f(wal_path(), std::ios::in | std::ios::out | std::ios::binary);
    auto size = std::filesystem::file_size(wal_path());
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put('X');  // inside the last record's payload: its CRC no longer matches
  }
  store_ = open();
  EXPECT_EQ(list("/f/").size(), 4u);
}

TEST_F(EmbeddedStoreTest, SnapshotsCompactTheLogAndRecoverTheSameState) {
  EmbeddedStore::Options small;
  small.compact_bytes = 4096;
  store_ = open(small);
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(put("/s/" + std::to_string(i % 50), std::string(100, 'a' + i % 26)).status.ok());
  EXPECT_GT(store_->epoch(), 0);
  EXPECT_LE(store_->log_bytes(), 4096u + 1024u);
  int64_t rev = store_->revision();
  auto before = list("/s/");
  close();
  int wal_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("wal-", 0) == 0) ++wal_files;
  }
  EXPECT_EQ(wal_files, 1);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/snapshot"));
  store_ = open(small);
  EXPECT_EQ(store_->revision(), rev);
  auto after = list("/s/");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].value, before[i].value);
    EXPECT_EQ(after[i].mod_revision, before[i].mod_revision);
    EXPECT_EQ(after[i].version, before[i].version);
  }
}

// A snapshot that cannot be written (the disk filled up under it) is held
// and tried again, as a log append is: the writes it carries are not lost,
// reads go on, later writes are refused with the reason, and once space is
// freed the snapshot lands and writes go on, without a reopen. Needs root to
// mount a small tmpfs (CI runs as root); skipped otherwise.
TEST_F(EmbeddedStoreTest, ASnapshotOnAFullDiskIsRetriedAndLosesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  TempDir mnt;
  if (::mount("tmpfs", mnt.path().c_str(), "tmpfs", 0, "size=1m") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mnt.path()};
  dir_ = mnt.path() + "/data";
  EmbeddedStore::Options o;
  o.compact_bytes = 256 * 1024;
  store_ = open(o);
  const std::string value(4096, 'v');
  std::map<std::string, std::string> acknowledged;
  for (int i = 0; i < 40; ++i) {  // a state of 160 KB: what a snapshot must write
    std::string k = "/s/" + std::to_string(i);
    ASSERT_TRUE(put(k, value).status.ok());
    acknowledged[k] = value;
  }
  // Leave 120 KB: the log appends up to the compaction fit, the snapshot does not.
  struct statvfs fs {};
  ASSERT_EQ(::statvfs(mnt.path().c_str(), &fs), 0);
  size_t free_bytes = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
  ASSERT_GT(free_bytes, 120u * 1024);
  std::string filler = mnt.path() + "/filler";
  std::ofstream(filler) << std::string(free_bytes - 120 * 1024, 'f');
  // Each write's answer outlives the loop that sent it: one riding on the
  // held snapshot is answered only once it lands, maybe long after.
  struct Sent {
    std::string key, value;
    std::shared_ptr<std::optional<WriteResult>> result;
  };
  std::vector<Sent> sent;
  std::string refusal;
  for (int i = 0; i < 200 && refusal.empty(); ++i) {
    Sent s{"/s/" + std::to_string(i % 40), std::string(4096, static_cast<char>('a' + i % 26)),
           std::make_shared<std::optional<WriteResult>>()};
    store_->put(s.key, s.value, 0, [r = s.result](WriteResult&& w) { *r = std::move(w); });
    sent.push_back(s);
    // Not answered within a second: held (the snapshot waits), not refused.
    run_until(
        &loop_, [&] { return s.result->has_value(); }, 1000);
    if (s.result->has_value() && !(*s.result)->status.ok()) refusal = (*s.result)->status.message;
  }
  ASSERT_NE(refusal.find("No space left on device"), std::string::npos) << refusal;
  EXPECT_EQ(store_->epoch(), 0) << "the snapshot was not the write that failed";
  auto during = list("/s/");
  ASSERT_EQ(during.size(), 40u);  // reads go on
  ASSERT_EQ(::unlink(filler.c_str()), 0);
  // Writes are refused until the held snapshot's retry (every second) lands.
  bool written = false;
  std::string last;
  for (int attempt = 0; attempt < 50 && !written; ++attempt) {
    std::optional<WriteResult> r;
    store_->put("/s/after", "a", 0, [&](WriteResult&& w) { r = std::move(w); });
    ASSERT_TRUE(run_until(
        &loop_, [&] { return r.has_value(); }, 5000));
    written = r->status.ok();
    last = r->status.message;
    if (!written)
      run_until(
          &loop_, [] { return false; }, 200);  // the loop runs (the retry's timer) while we pace
  }
  ASSERT_TRUE(written) << last;
  ASSERT_TRUE(run_until(&loop_, [&] {
    return std::all_of(sent.begin(), sent.end(), [](const Sent& s) { return s.result->has_value(); });
  })) << "a held write was never answered";
  for (const auto& s : sent) {  // in the order they were sent, which is the order they apply in
    if ((*s.result)->status.ok()) acknowledged[s.key] = s.value;
  }
  acknowledged["/s/after"] = "a";
  EXPECT_GT(store_->epoch(), 0);  // the snapshot landed
  // Every acknowledged write, and the ones the held snapshot carried, after a reopen.
  close();
  store_ = open(o);
  auto now = list("/s/");
  std::map<std::string, std::string> got;
  for (const auto& kv : now) got[kv.key] = kv.value;
  for (const auto& [k, v] : acknowledged) EXPECT_EQ(got[k], v) << k;
}

TEST_F(EmbeddedStoreTest, ASecondProcessCannotOpenTheSameDirectory) {
  store_ = open();
  std::string error;
  pid_t pid = fork();
  if (pid == 0) {
    // flock is per open file description: only another process sees the lock.
    uv_loop_t l;
    uv_loop_init(&l);
    LoopClock c(&l);
    auto s = EmbeddedStore::open(&l, c, dir_, &error);
    _exit(s ? 0 : (error.find("in use") != std::string::npos ? 3 : 4));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

// Reads "ack KEY" lines from the writer until `want` acks or it exits.
std::set<std::string> read_acks(int fd, size_t want, std::string* rest) {
  std::set<std::string> acks;
  char buf[65536];
  while (acks.size() < want) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20'000) <= 0) break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    rest->append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = rest->find('\n')) != std::string::npos) {
      std::string line = rest->substr(0, nl);
      rest->erase(0, nl + 1);
      if (line.rfind("ack ", 0) == 0) acks.insert(line.substr(4));
    }
  }
  return acks;
}

TEST_F(EmbeddedStoreTest, SigkillDuringAWriteStormLosesNothingAcknowledged) {
  const char* writer = std::getenv("UVSCHED_STORE_WRITER");
  ASSERT_NE(writer, nullptr);
  std::set<std::string> acked_total;
  for (int round = 0; round < 5; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    std::string prefix = "/storm/" + std::to_string(round) + "/";
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      std::string store = "embedded:" + dir_;
      execl(writer, writer, "--store", store.c_str(), "--count", "1000000", "--inflight", "64", "--prefix",
            prefix.c_str(), "--print-acks", nullptr);
      _exit(127);
    }
    ::close(fds[1]);
    std::string rest;
    // Kill it at a different point each round, mid-storm.
    auto acks = read_acks(fds[0], 500 + static_cast<size_t>(round) * 1700, &rest);
    kill(pid, SIGKILL);
    acks.merge(read_acks(fds[0], SIZE_MAX, &rest));  // acks already in the pipe count too
    ::close(fds[0]);
    waitpid(pid, nullptr, 0);
    ASSERT_GE(acks.size(), 500u) << "the writer did not get going";
    acked_total.insert(acks.begin(), acks.end());

    store_ = open();
    std::set<std::string> present;
    for (const auto& kv : list("/storm/")) present.insert(kv.key);
    size_t missing = 0;
    for (const auto& k : acked_total) missing += present.count(k) == 0;
    EXPECT_EQ(missing, 0u) << "round " << round << ": acknowledged writes lost";
    close();
  }
}

}  // namespace
}  // namespace uvsched::test
