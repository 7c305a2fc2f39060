#include "handlers/ui/ui_routes.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "handlers/json_response.h"
#include "handlers/ui/ui_assets.h"

namespace uvsched {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The q among one Accept-Encoding element's parameters ("q=0.5;x=y"); 1 without one.
double quality(std::string_view params) {
  for (size_t at = 0; at < params.size();) {
    size_t semi = params.find(';', at);
    std::string_view p = trim(params.substr(at, semi == std::string_view::npos ? std::string_view::npos : semi - at));
    if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
      return std::strtod(std::string(p.substr(2)).c_str(), nullptr);
    }
    if (semi == std::string_view::npos) break;
    at = semi + 1;
  }
  return 1;
}

// Security headers for every file: scripts and styles only from the page's
// own origin (no inline code to inject into), never framed, types as sent.
void harden(HttpResponse& r) {
  r.headers.push_back({"Content-Security-Policy",
                       "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'"});
  r.headers.push_back({"X-Content-Type-Options", "nosniff"});
  r.headers.push_back({"Referrer-Policy", "no-referrer"});
}

void serve(RequestContext& ctx, std::string_view name) {
  const UiAsset* a = find_ui_asset(name);
  if (a == nullptr) return ctx.reply(json_error(404, "no file /ui/" + std::string(name)));
  HttpResponse r;
  // Revalidated each time (a new binary may bring new files); the ETag makes
  // that a 304 of no body.
  r.headers.push_back({"Cache-Control", "no-cache"});
  r.headers.push_back({"ETag", std::string(a->etag)});
  r.headers.push_back({"Vary", "Accept-Encoding"});
  harden(r);
  if (const std::string* inm = ctx.request.header("If-None-Match");
      inm != nullptr && inm->find(a->etag) != std::string::npos) {
    r.status = 304;
    return ctx.reply(std::move(r));
  }
  r.status = 200;
  r.content_type = std::string(a->content_type);
  const std::string* ae = ctx.request.header("Accept-Encoding");
  if (ae != nullptr && accepts_gzip(*ae)) {
    r.headers.push_back({"Content-Encoding", "gzip"});
    r.body = std::string(a->gzipped);
  } else {
    r.body = std::string(a->raw);
  }
  ctx.reply(std::move(r));
}

}  // namespace

const UiAsset* find_ui_asset(std::string_view name) {
  for (size_t i = 0; i < kUiAssetCount; ++i) {
    if (kUiAssets[i].name == name) return &kUiAssets[i];
  }
  return nullptr;
}

bool accepts_gzip(std::string_view value) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view element = value.substr(0, comma);
    size_t semi = element.find(';');
    std::string_view coding = trim(element.substr(0, semi));
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
      return semi == std::string_view::npos || quality(element.substr(semi + 1)) > 0;
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

void add_ui_routes(Router& router) {
  router.add("GET", "/ui", [](RequestContext& ctx) {
    HttpResponse r;
    r.status = 308;
    r.headers.push_back({"Location", "/ui/"});
    ctx.reply(std::move(r));
  });
  router.add("GET", "/ui/", [](RequestContext& ctx) { serve(ctx, "index.html"); });
  router.add("GET", "/ui/{file}", [](RequestContext& ctx) { serve(ctx, ctx.param("file")); });
}

}  // namespace uvsched
