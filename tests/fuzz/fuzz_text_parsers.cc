// The small text grammars on arbitrary bytes: label and field selectors,
// resource quantities, Prometheus text, URLs and query strings.
#include <cstddef>
#include <cstdint>
#include <string>

#include "handlers/ml/prom_text.h"
#include "policy/label_selector.h"
#include "policy/quantity.h"
#include "reactor/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (auto sel = uvsched::LabelSelector::parse(text, &error)) sel->matches({{"app", "demo"}, {"x", ""}});
  uvsched::parse_field_selector(text, {"metadata.name", "spec.nodeName"}, &error);
  if (auto q = uvsched::parse_quantity_milli(text); q && *q < 0) __builtin_trap();  // quantities are never negative
  uvsched::parse_prometheus_text(text);
  uvsched::parse_url(text);
  uvsched::parse_host_port(text);
  uvsched::percent_decode(text, true);
  uvsched::query_param(text, "watch");
  return 0;
}
