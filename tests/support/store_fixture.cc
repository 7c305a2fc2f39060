#include "tests/support/store_fixture.h"

#include <cstdlib>
#include <filesystem>

#include "storage/embedded_store.h"

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

}  // namespace

std::unique_ptr<StoreBackend> make_embedded_backend() { return std::make_unique<EmbeddedBackend>(); }

}  // namespace uvsched::test
