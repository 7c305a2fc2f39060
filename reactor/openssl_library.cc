#include "reactor/openssl_library.h"

#include <dlfcn.h>

#include <memory>

namespace uvsched {
namespace {

#define UVSCHED_STRINGIFY_(x) #x
#define UVSCHED_STRINGIFY(x) UVSCHED_STRINGIFY_(x)
// The soname the headers were written for: libssl.so.3 for OpenSSL 3.
constexpr const char* kLibssl = "libssl.so." UVSCHED_STRINGIFY(OPENSSL_SHLIB_VERSION);

struct Loaded {
  std::unique_ptr<OpenSsl> api;
  std::string error;
};

Loaded load() {
  Loaded out;
  // libssl pulls libcrypto in; a lookup through libssl's handle searches both.
  void* handle = dlopen(kLibssl, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    out.error = std::string("cannot load ") + kLibssl + ": " + (why ? why : "unknown error");
    return out;
  }
  auto api = std::make_unique<OpenSsl>();
#define UVSCHED_OPENSSL_RESOLVE(name)                                      \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
  if (!api->name) {                                                        \
    out.error = std::string(kLibssl) + " has no " #name;                   \
    return out;                                                            \
  }
  UVSCHED_OPENSSL_FUNCTIONS(UVSCHED_OPENSSL_RESOLVE)
#undef UVSCHED_OPENSSL_RESOLVE
  out.api = std::move(api);
  return out;
}

}  // namespace

const OpenSsl* OpenSsl::get(std::string* error) {
  static const Loaded loaded = load();  // thread-safe once; the handle stays open
  if (!loaded.api && error) *error = loaded.error;
  return loaded.api.get();
}

}  // namespace uvsched
