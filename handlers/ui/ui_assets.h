// The status page's files (handlers/ui/assets, and Chart.js from Debian's
// libjs-chart.js), compiled into the binary by tools/embed_assets.py: the
// daemon fetches nothing at run time and needs no directory of its own.
#pragma once

#include <cstddef>
#include <string_view>

namespace uvsched {

struct UiAsset {
  std::string_view name;          // as under /ui/: "index.html", "chart.min.js"
  std::string_view content_type;  // with its charset where it has one
  std::string_view raw;
  std::string_view gzipped;  // gzip -9 of raw, made at build time
  std::string_view etag;     // quoted, from a hash of raw
};

extern const UiAsset kUiAssets[];
extern const size_t kUiAssetCount;

// nullptr when there is no such file.
const UiAsset* find_ui_asset(std::string_view name);

}  // namespace uvsched
