#include "storage/store_factory.h"

#include "reactor/tls.h"
#include "storage/embedded_store.h"
#include "storage/etcd_store.h"

namespace uvsched {

size_t store_connections_at_most(const std::string& spec) {
  return spec.rfind("etcd:", 0) == 0 ? EtcdStore::kRequestConnections + EtcdStore::kWatchConnections : 0;
}

std::unique_ptr<Store> open_store(uv_loop_t* loop, Clock& clock, const std::string& spec,
                                  const StoreOptions& store_options, std::string* error) {
  if (spec.rfind("embedded:", 0) == 0) {
    EmbeddedStore::Options options;
    options.value_dictionary = store_options.value_dictionary;
    return EmbeddedStore::open(loop, clock, spec.substr(9), error, std::move(options));
  }
  if (spec.rfind("etcd:", 0) == 0) {
    std::vector<Url> endpoints;
    if (!parse_etcd_endpoints(spec.substr(5), &endpoints)) {
      *error = "bad etcd endpoint list '" + spec.substr(5) + "'";
      return nullptr;
    }
    EtcdStore::Options options;
    options.value_dictionary = store_options.value_dictionary;
    options.older_value_dictionaries = store_options.older_value_dictionaries;
    options.pack_values = store_options.pack_etcd_values;
    bool https = false;
    for (const Url& u : endpoints) https = https || u.scheme == "https";
    if (https) {
      options.tls = TlsContext::client(store_options.etcd_ca, error);
      if (!options.tls) return nullptr;
    }
    return std::make_unique<EtcdStore>(loop, clock, std::move(endpoints), std::move(options));
  }
  *error = "unsupported store '" + spec + "' (expected embedded:DIR or etcd:URLS)";
  return nullptr;
}

}  // namespace uvsched
