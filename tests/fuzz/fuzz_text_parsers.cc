// The small text grammars on arbitrary bytes: label and field selectors,
// resource quantities, Prometheus text, URLs and query strings. Besides "no
// crash": a field selector names only supported keys; a quantity is exact
// (its milli form parses back to the same value); percent-encoding round
// trips; a parsed URL, written back, parses to the same parts.
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
  if (auto fields = uvsched::parse_field_selector(text, {"metadata.name", "spec.nodeName"}, &error)) {
    for (const auto& f : *fields) {
      if (f.key != "metadata.name" && f.key != "spec.nodeName") __builtin_trap();
    }
  }
  if (auto q = uvsched::parse_quantity_milli(text)) {
    if (*q < 0) __builtin_trap();  // quantities are never negative
    if (uvsched::parse_quantity_milli(std::to_string(*q) + "m") != q) __builtin_trap();
  }
  uvsched::parse_prometheus_text(text);
  if (auto url = uvsched::parse_url(text)) {
    auto again = uvsched::parse_url(url->base() + url->target);
    if (!again || again->scheme != url->scheme || again->host != url->host || again->port != url->port ||
        again->target != url->target) {
      __builtin_trap();
    }
  }
  uvsched::parse_host_port(text);
  uvsched::percent_decode(text, true);
  if (uvsched::percent_decode(uvsched::percent_encode(text), false) != text) __builtin_trap();
  uvsched::query_param(text, "watch");
  return 0;
}
