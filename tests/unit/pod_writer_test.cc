// The one guarded update of a pod (PodWriter) against a FakeStore whose
// answers the test runs: a change is redone on the version another writer
// left, gives up as a conflict after exactly kAttempts tries, starts from the
// kept copy only when asked, and recognises its own writes coming back once.
#include "handlers/pods/pod_writer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/support/fake_store.h"

namespace uvsched {
namespace {

using Outcome = PodWriter::Outcome;
using Verdict = PodWriter::Verdict;
using test::FakeStore;

constexpr const char* kKey = "/registry/pods/default/p";
void ignored(WriteResult&&) {}

class PodWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.put(kKey, R"({"metadata":{"name":"p"},"n":0})", 0, ignored);
    store_.run();
  }
  int64_t revision() const { return store_.revision(); }
  // Adds one to "n": the change every test makes unless it says otherwise.
  static Verdict bump(JsonValue& pod, int64_t) {
    pod.set("n", JsonValue::number(static_cast<double>(*pod.get("n")->as_integer() + 1)));
    return Verdict::kPut;
  }
  // Updates kKey and runs the store until the update is done.
  PodWriter::Result update(PodWriter::Update u) {
    std::optional<PodWriter::Result> got;
    if (u.key.empty()) u.key = kKey;
    if (!u.change) u.change = bump;
    u.done = [&got](PodWriter::Result&& r) { got = std::move(r); };
    writer_.update(std::move(u));
    store_.run();
    EXPECT_TRUE(got.has_value()) << "the update never finished";
    return got.value_or(PodWriter::Result{});
  }
  std::string stored() const { return store_.value(kKey).value_or("<none>"); }

  FakeStore store_;
  PodWriter writer_{store_};
};

TEST_F(PodWriterTest, ReadsChangesAndWritesOverTheRevisionItRead) {
  int64_t read_at = 0;
  PodWriter::Result r = update({.change = [&](JsonValue& pod, int64_t rev) {
    read_at = rev;
    return bump(pod, rev);
  }});
  EXPECT_EQ(r.outcome, Outcome::kWritten);
  EXPECT_EQ(read_at, revision() - 1);
  EXPECT_EQ(r.revision, revision());
  EXPECT_EQ(r.stored, stored());
  EXPECT_NE(stored().find(R"("n":1)"), std::string::npos) << stored();
}

TEST_F(PodWriterTest, AChangeLostToAnotherWriterIsRedoneOnTheirVersion) {
  int calls = 0;
  PodWriter::Result r = update({.change = [&](JsonValue& pod, int64_t rev) {
    if (++calls == 1) {
      // Another writer gets in between this read and its write.
      store_.put(kKey, R"({"metadata":{"name":"p"},"n":10,"theirs":true})", 0, ignored);
    }
    return bump(pod, rev);
  }});
  EXPECT_EQ(r.outcome, Outcome::kWritten);
  EXPECT_EQ(calls, 2);
  EXPECT_NE(stored().find(R"("n":11)"), std::string::npos) << "their change kept and ours on it: " << stored();
  EXPECT_NE(stored().find(R"("theirs":true)"), std::string::npos) << stored();
}

TEST_F(PodWriterTest, GivesUpAsAConflictAfterExactlyKAttemptsTries) {
  int calls = 0;
  PodWriter::Result r = update({.change = [&](JsonValue& pod, int64_t rev) {
    ++calls;
    store_.put(kKey, R"({"metadata":{"name":"p"},"n":100})", 0, ignored);  // every time
    return bump(pod, rev);
  }});
  EXPECT_EQ(r.outcome, Outcome::kConflict);
  EXPECT_EQ(calls, PodWriter::kAttempts);
  EXPECT_NE(stored().find(R"("n":100)"), std::string::npos) << stored();
}

TEST_F(PodWriterTest, AMissingPodIsMissingAndNothingIsWritten) {
  size_t before = store_.writes();
  bool changed = false;
  PodWriter::Result r = update({.key = "/registry/pods/default/absent", .change = [&](JsonValue&, int64_t) {
                                  changed = true;
                                  return Verdict::kPut;
                                }});
  EXPECT_EQ(r.outcome, Outcome::kMissing);
  EXPECT_FALSE(changed);
  EXPECT_EQ(store_.writes(), before);
}

TEST_F(PodWriterTest, ADeclinedChangeWritesNothing) {
  size_t before = store_.writes();
  std::string was = stored();
  PodWriter::Result r = update({.change = [](JsonValue& pod, int64_t rev) {
    bump(pod, rev);  // changed, and then refused: the change is not stored
    return Verdict::kDecline;
  }});
  EXPECT_EQ(r.outcome, Outcome::kDeclined);
  EXPECT_EQ(store_.writes(), before);
  EXPECT_EQ(stored(), was);
}

TEST_F(PodWriterTest, ADeleteVerdictRemovesTheKeyAndGivesItsLastVersion) {
  PodWriter::Result r = update({.change = [](JsonValue& pod, int64_t rev) {
    bump(pod, rev);
    return Verdict::kDelete;
  }});
  EXPECT_EQ(r.outcome, Outcome::kDeleted);
  EXPECT_TRUE(r.written());
  EXPECT_FALSE(store_.value(kKey).has_value());
  EXPECT_NE(r.stored.find(R"("n":1)"), std::string::npos) << r.stored;
}

TEST_F(PodWriterTest, AnUnreadablePodIsNotChanged) {
  store_.put(kKey, "{not json", 0, ignored);
  store_.run();
  PodWriter::Result r = update({});
  EXPECT_EQ(r.outcome, Outcome::kUnreadable);
  EXPECT_EQ(stored(), "{not json");
}

TEST_F(PodWriterTest, AStoreThatIsDownSaysWhy) {
  store_.set_down("etcd: no leader");
  PodWriter::Result r = update({});
  EXPECT_EQ(r.outcome, Outcome::kStoreDown);
  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(r.written());
}

TEST_F(PodWriterTest, StartsFromTheKeptCopyOnlyWhenAsked) {
  // A kept copy at the store's revision whose text differs from the store's:
  // what is written shows which one the change started from.
  writer_.keep(kKey, revision(), R"({"metadata":{"name":"p"},"n":40})");
  EXPECT_EQ(update({.cached = false}).outcome, Outcome::kWritten);
  EXPECT_NE(stored().find(R"("n":1)"), std::string::npos) << "read from the store: " << stored();
  // The write refreshed the kept copy: from it, one compare-and-swap.
  writer_.keep(kKey, revision(), R"({"metadata":{"name":"p"},"n":40})");
  EXPECT_EQ(update({.cached = true}).outcome, Outcome::kWritten);
  EXPECT_NE(stored().find(R"("n":41)"), std::string::npos) << "from the kept copy: " << stored();
}

TEST_F(PodWriterTest, AStaleKeptCopyCostsOneConflictAndAReadNotTheUpdate) {
  writer_.keep(kKey, revision() - 1 > 0 ? revision() - 1 : 0, R"({"metadata":{"name":"p"},"n":40})");
  int calls = 0;
  PodWriter::Result r = update({.change =
                                    [&](JsonValue& pod, int64_t rev) {
                                      ++calls;
                                      return bump(pod, rev);
                                    },
                                .cached = true});
  EXPECT_EQ(r.outcome, Outcome::kWritten);
  EXPECT_EQ(calls, 2);
  EXPECT_NE(stored().find(R"("n":1)"), std::string::npos) << "redone on the store's version: " << stored();
}

TEST_F(PodWriterTest, ATextEditSkipsTheChange) {
  bool changed = false;
  PodWriter::Result r =
      update({.change =
                  [&](JsonValue&, int64_t) {
                    changed = true;
                    return Verdict::kPut;
                  },
              .edit = [](std::string_view) { return std::optional<std::string>(R"({"edited":1})"); }});
  EXPECT_EQ(r.outcome, Outcome::kWritten);
  EXPECT_FALSE(changed);
  EXPECT_EQ(stored(), R"({"edited":1})");
}

TEST_F(PodWriterTest, AnOwnWriteIsRecognisedOnceWhenItComesBack) {
  PodWriter::Result r = update({.own = true});
  ASSERT_EQ(r.outcome, Outcome::kWritten);
  std::string other = R"({"n":99})";
  EXPECT_FALSE(writer_.own_write_returned("/registry/pods/default/q", &r.stored)) << "another key";
  EXPECT_TRUE(writer_.own_write_returned(kKey, &r.stored));
  EXPECT_FALSE(writer_.own_write_returned(kKey, &r.stored)) << "recognised once";

  ASSERT_EQ(update({.own = true}).outcome, Outcome::kWritten);
  EXPECT_FALSE(writer_.own_write_returned(kKey, &other)) << "someone else's version came first";
  EXPECT_FALSE(writer_.own_write_returned(kKey, &other)) << "and the record went with it";

  ASSERT_EQ(update({.own = false}).outcome, Outcome::kWritten);
  std::string now = stored();
  EXPECT_FALSE(writer_.own_write_returned(kKey, &now)) << "not marked own";
}

TEST_F(PodWriterTest, AFailedOwnWriteIsNotRememberedAsOurs) {
  int calls = 0;
  PodWriter::Result r = update({.change =
                                    [&](JsonValue& pod, int64_t rev) {
                                      ++calls;
                                      store_.put(kKey, R"({"metadata":{"name":"p"},"n":7})", 0, ignored);
                                      return bump(pod, rev);
                                    },
                                .own = true});
  ASSERT_EQ(r.outcome, Outcome::kConflict);
  // What the last try would have written (n 8 over the other's 7) never landed.
  std::string would = R"({"metadata":{"name":"p"},"n":8})";
  EXPECT_FALSE(writer_.own_write_returned(kKey, &would));
}

TEST_F(PodWriterTest, ADryRunWritesNothingButSaysWhatWouldBeStored) {
  size_t before = store_.writes();
  std::string was = stored();
  PodWriter::Result r = update({.dry_run = true});
  EXPECT_EQ(r.outcome, Outcome::kWritten);
  EXPECT_NE(r.stored.find(R"("n":1)"), std::string::npos) << r.stored;
  EXPECT_EQ(r.revision, revision()) << "the revision it was read at";
  EXPECT_EQ(store_.writes(), before);
  EXPECT_EQ(stored(), was);
}

}  // namespace
}  // namespace uvsched
