#include "tests/support/store_fixture.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "storage/embedded_store.h"
#include "storage/etcd_store.h"
#include "tests/support/etcd_process.h"
#include "tests/support/raw_http.h"

namespace uvsched::test {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "uvsched-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  path_ = made ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

namespace {

class EmbeddedBackend : public StoreBackend {
 public:
  std::string name() const override { return "embedded"; }
  std::unique_ptr<Store> open(uv_loop_t* loop, Clock& clock, std::string* error) override {
    return EmbeddedStore::open(loop, clock, dir_.path() + "/data", error);
  }

 private:
  TempDir dir_;
};


// One etcd for the whole test binary; each backend starts from an empty keyspace.
class EtcdBackend : public StoreBackend {
 public:
  explicit EtcdBackend(EtcdProcess* etcd) : etcd_(etcd) {}
  std::string name() const override { return "etcd"; }
  std::unique_ptr<Store> open(uv_loop_t* loop, Clock& clock, std::string*) override {
    std::vector<Url> eps;
    parse_etcd_endpoints(etcd_->url(), &eps);
    return std::make_unique<EtcdStore>(loop, clock, std::move(eps));
  }

 private:
  EtcdProcess* etcd_;
};

EtcdProcess* shared_etcd() {
  static EtcdProcess* etcd = [] {
    auto* e = new EtcdProcess();  // lives until the binary exits; its destructor never runs
    if (!e->start()) {
      delete e;
      return static_cast<EtcdProcess*>(nullptr);
    }
    std::atexit([] { shared_etcd()->stop(SIGKILL); });
    return e;
  }();
  return etcd;
}

}  // namespace

std::unique_ptr<StoreBackend> make_embedded_backend() { return std::make_unique<EmbeddedBackend>(); }

std::unique_ptr<StoreBackend> make_etcd_backend() {
  EtcdProcess* etcd = shared_etcd();
  if (etcd == nullptr) return nullptr;
  // Wipe every key ("\0" to "\0" is the whole keyspace) so tests start clean.
  auto r = http_request(etcd->client_port(), "POST", "/v3/kv/deleterange", R"({"key":"AA==","range_end":"AA=="})");
  if (!r || r->status != 200) return nullptr;
  return std::make_unique<EtcdBackend>(etcd);
}


}  // namespace uvsched::test
