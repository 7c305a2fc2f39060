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
  explicit EtcdBackend(std::string urls) : urls_(std::move(urls)) {}
  std::string name() const override { return "etcd"; }
  std::unique_ptr<Store> open(uv_loop_t* loop, Clock& clock, std::string*) override {
    std::vector<Url> eps;
    parse_etcd_endpoints(urls_, &eps);
    return std::make_unique<EtcdStore>(loop, clock, std::move(eps));
  }

 private:
  std::string urls_;  // one member, or every member of a cluster
};

bool wipe_keyspace(uint16_t client_port) {
  // "\0" to "\0" is the whole keyspace.
  auto r = http_request(client_port, "POST", "/v3/kv/deleterange", R"({"key":"AA==","range_end":"AA=="})");
  return r && r->status == 200;
}

EtcdCluster* shared_etcd_cluster() {
  static EtcdCluster* cluster = [] {
    auto* c = new EtcdCluster(3);  // lives until the binary exits
    if (!c->start()) {
      delete c;
      return static_cast<EtcdCluster*>(nullptr);
    }
    std::atexit([] {
      EtcdCluster* c = shared_etcd_cluster();
      for (int i = 0; i < c->size(); ++i) c->stop_member(i, SIGKILL);
    });
    return c;
  }();
  return cluster;
}

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
  if (!wipe_keyspace(etcd->client_port())) return nullptr;  // tests start clean
  return std::make_unique<EtcdBackend>(etcd->url());
}

std::unique_ptr<StoreBackend> make_etcd_cluster_backend() {
  EtcdCluster* cluster = shared_etcd_cluster();
  if (cluster == nullptr || !wipe_keyspace(cluster->client_port(0))) return nullptr;
  return std::make_unique<EtcdBackend>(cluster->urls());
}

}  // namespace uvsched::test
