#include "handlers/pods/k8s_request.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <type_traits>

#include "handlers/pods/k8s_protobuf.h"
#include "handlers/pods/k8s_status.h"
#include "reactor/url.h"

namespace uvsched {

HttpResponse store_down(const StoreStatus& st) {
  return k8s_error(503, "ServiceUnavailable", "the store is unavailable: " + st.message);
}

bool query_flag(std::string_view query, std::string_view name) {
  auto v = query_param(query, name);
  return v && *v != "0" && !iequals(*v, "false");
}

namespace {

// apimachinery's ValidateListOptions, for a server without the WatchList
// feature (client-go's watch-list clients fall back to list and watch when
// refused; a watch that ignored sendInitialEvents would leave them waiting
// for the bookmark that ends the initial events).
std::optional<HttpResponse> refuse_bad_list_semantics(std::string_view query) {
  auto given = [&](std::string_view name) { return query_param(query, name).value_or(""); };
  const std::string match = given("resourceVersionMatch");
  const bool has_continue = !given("continue").empty();
  const bool initial_events = query_param(query, "sendInitialEvents").has_value();
  std::vector<FieldIssue> issues;
  auto forbidden = [&](const char* field, std::string what) {
    issues.push_back({field, "FieldValueForbidden", "Forbidden: " + std::move(what)});
  };
  auto not_supported = [&](std::string supported) {
    issues.push_back({"resourceVersionMatch", "FieldValueNotSupported",
                      "Unsupported value: \"" + match + "\": supported values: " + std::move(supported)});
  };
  if (query_flag(query, "watch")) {
    if (initial_events) {
      if (match != "NotOlderThan")
        forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
      forbidden("sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled");
    }
    if (!match.empty()) {
      if (!initial_events)
        forbidden("resourceVersionMatch",
                  "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
      if (match != "NotOlderThan") not_supported("\"NotOlderThan\"");
      if (has_continue)
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
    }
  } else {
    if (!match.empty()) {
      if (given("resourceVersion").empty())
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided");
      if (has_continue)
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
      if (match != "Exact" && match != "NotOlderThan") not_supported("\"Exact\", \"NotOlderThan\", \"\"");
      if (match == "Exact" && given("resourceVersion") == "0")
        forbidden("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
    }
    if (initial_events) forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
  }
  if (issues.empty()) return std::nullopt;
  // As field.ErrorList's aggregate prints them: one alone, or [a, b].
  std::string all;
  for (const auto& i : issues) all += (all.empty() ? "" : ", ") + i.field + ": " + i.message;
  if (issues.size() > 1) all = "[" + all + "]";
  return k8s_error_with_causes(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: " + all, issues, "ListOptions",
                               "");
}

// Go's strconv error for `text` that is not a whole Int (ParseInt, which
// takes a leading '+') or uint64_t (ParseUint); nullopt when it is one.
template <typename Int>
std::optional<std::string> strconv_error(const std::string& text) {
  std::string_view s = text;
  if (std::is_signed_v<Int> && s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);  // from_chars: '-' only
  Int n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  bool whole = end == s.data() + s.size();
  if (ec == std::errc() && whole) return std::nullopt;
  bool out_of_range = ec == std::errc::result_out_of_range && whole;
  return std::string(std::is_signed_v<Int> ? "strconv.ParseInt" : "strconv.ParseUint") + ": parsing \"" + text +
         "\": " + (out_of_range ? "value out of range" : "invalid syntax");
}

}  // namespace

std::optional<uint64_t> watch_timeout_ms(std::string_view query) {
  constexpr int64_t kYearSeconds = 365LL * 24 * 3600;
  auto t = query_param(query, "timeoutSeconds");
  if (!t) return std::nullopt;
  int64_t seconds = std::strtoll(t->c_str(), nullptr, 10);
  if (seconds == 0) return std::nullopt;
  return static_cast<uint64_t>(std::clamp<int64_t>(seconds, 0, kYearSeconds)) * 1000;
}

std::optional<HttpResponse> refuse_bad_list_options(std::string_view query) {
  for (std::string_view name : {"limit", "timeoutSeconds"}) {
    auto v = query_param(query, name);
    if (auto error = v ? strconv_error<int64_t>(*v) : std::nullopt) return k8s_error(400, "BadRequest", *error);
  }
  // A resourceVersion is a revision (apiserver's ParseResourceVersion: Go's
  // strconv.ParseUint; "" and "0" are "any").
  if (auto rv = query_param(query, "resourceVersion"); rv && !rv->empty() && *rv != "0") {
    if (auto error = strconv_error<uint64_t>(*rv)) {
      return k8s_error(400, "BadRequest", "resourceVersion: Invalid value: \"" + *rv + "\": " + *error);
    }
  }
  return refuse_bad_list_semantics(query);
}

bool sends_protobuf(const HttpRequest& request) {
  const std::string* ct = request.header("Content-Type");
  return ct != nullptr && std::string_view(*ct).substr(0, ct->find(';')) == kKubernetesProtobuf;
}

// A body uvsched cannot decode is refused for its media type, as the API
// server does, not by a JSON parse error: kubectl's typed clients try
// protobuf first and then JSON. No Content-Type is taken as JSON (curl -d).
std::optional<HttpResponse> refuse_media_type(const HttpRequest& request, bool protobuf_too) {
  const std::string* ct = request.header("Content-Type");
  if (ct == nullptr) return std::nullopt;
  std::string type = ct->substr(0, ct->find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  if (type.empty() || type == "application/json" || type == "*/*") return std::nullopt;
  return k8s_error(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format (" + type +
                       ") - accepted media types include: application/json" +
                       (protobuf_too ? std::string(", ") + std::string(kKubernetesProtobuf) : std::string()));
}

// The request's fieldValidation, or the 400 for a value it may not have.
std::variant<FieldValidation, HttpResponse> field_validation_of(const HttpRequest& request) {
  auto given = query_param(request.query(), "fieldValidation");
  if (auto mode = parse_field_validation(given ? *given : "")) return *mode;
  return k8s_error(400, "BadRequest",
                   "fieldValidation must be one of Ignore, Warn or Strict, not \"" + (given ? *given : "") + "\"");
}

// The 400 for a body the typed decoder refused, every cause named.
HttpResponse typed_refusal(const TypedDecode& decoded, FieldValidation mode, std::string_view kind,
                           std::string_view name) {
  return k8s_bad_request(decoded.message(kind, mode), decoded.causes(mode), kind, name);
}

// The typed decoding of a body as `type` (see typed_decode.h), under the
// request's fieldValidation. The refusal, or nullopt with the Warning header
// values to answer with.
std::optional<HttpResponse> decode_body(const HttpRequest& request, JsonValue& body, std::string_view type,
                                        std::string_view kind, std::vector<std::string>* warnings) {
  auto mode = field_validation_of(request);
  if (auto* refused = std::get_if<HttpResponse>(&mode)) return std::move(*refused);
  FieldValidation fv = std::get<FieldValidation>(mode);
  TypedDecode decoded = decode_typed(body, *schema_type(type));
  if (decoded.refused(fv)) {
    const JsonValue* name = body.find({"metadata", "name"});
    return typed_refusal(decoded, fv, kind, name && name->is_string() ? name->text() : "");
  }
  if (fv == FieldValidation::kWarn) *warnings = decoded.warnings();
  return std::nullopt;
}

HttpResponse with_warnings(HttpResponse r, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) r.headers.push_back({"Warning", w});
  return r;
}

std::string k8s_warning(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::optional<PatchType> patch_type(const std::string* content_type) {
  std::string type = content_type ? content_type->substr(0, content_type->find(';')) : "";
  if (type == "application/json-patch+json") return PatchType::kJson;
  if (type == "application/merge-patch+json") return PatchType::kMerge;
  if (type == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  if (type == "application/apply-patch+yaml") return PatchType::kApply;
  return std::nullopt;
}

// The write's field manager (fieldManager), which an apply must name, and
// whether it forces conflicts (force, for an apply only); or the 422 the API
// server answers for options it refuses.
namespace {
HttpResponse unsupported_dry_run(const std::string& value) {
  return k8s_error(400, "BadRequest",
                   "Invalid dry run value: dryRun: Unsupported value: \"" + value + "\": supported values: \"All\"");
}

// dryRun in the query: absent, All, or refused.
std::variant<bool, HttpResponse> dry_run_in_query(std::string_view query) {
  auto value = query_param(query, "dryRun");
  if (!value) return false;
  if (*value != "All") return unsupported_dry_run(*value);
  return true;
}

// dryRun in a DeleteOptions object (null: none), over the query's.
std::variant<bool, HttpResponse> dry_run_in_options(const JsonValue* options, bool dry) {
  const JsonValue* list = options && options->is_object() ? options->get("dryRun") : nullptr;
  if (!list) return dry;
  if (!list->is_array()) return k8s_error(400, "BadRequest", "dryRun must be a list of strings");
  for (const auto& v : list->items()) {
    if (!v.is_string() || v.text() != "All") return unsupported_dry_run(v.is_string() ? v.text() : v.dump());
    dry = true;
  }
  return dry;
}

}  // namespace

std::variant<WriteOptions, HttpResponse> write_options(std::string_view query, bool apply) {
  auto manager = query_param(query, "fieldManager");
  auto invalid = [](std::string_view field, std::string_view what) {
    std::string message =
        std::string("PatchOptions.meta.k8s.io \"\" is invalid: ") + std::string(field) + ": " + std::string(what);
    return k8s_error_with_causes(422, "Invalid", message,
                                 {{std::string(field), "FieldValueInvalid", std::string(what)}}, "PatchOptions", "");
  };
  if (apply && (!manager || manager->empty()))
    return invalid("fieldManager", "Required value: is required for apply patch");
  if (manager && manager->size() > 128) return invalid("fieldManager", "Too long: may not be longer than 128");
  bool force = query_flag(query, "force");
  if (force && !apply) return invalid("force", "Forbidden: may not be specified for non-apply patch");
  auto dry = dry_run_in_query(query);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return std::move(*refused);
  return WriteOptions{manager ? *manager : std::string(), force, std::get<bool>(dry)};
}

std::variant<DeleteOptions, HttpResponse> delete_options_in_query(std::string_view query) {
  DeleteOptions o;
  auto dry = dry_run_in_query(query);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return std::move(*refused);
  o.dry_run = std::get<bool>(dry);
  if (auto value = query_param(query, "gracePeriodSeconds")) {
    int64_t n = 0;
    const char* last = value->data() + value->size();
    auto [stop, failure] = std::from_chars(value->data(), last, n);
    if (value->empty() || failure != std::errc() || stop != last) {
      return k8s_error(400, "BadRequest",
                       "gracePeriodSeconds must be a whole number of seconds, not \"" + *value + "\"");
    }
    o.grace_seconds = n;
  }
  return o;
}

std::variant<DeleteOptions, HttpResponse> delete_options_in(const JsonValue* options, DeleteOptions o) {
  auto dry = dry_run_in_options(options, o.dry_run);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return std::move(*refused);
  o.dry_run = std::get<bool>(dry);
  if (!options || !options->is_object()) return o;
  if (const JsonValue* g = options->get("gracePeriodSeconds"); g && !g->is_null()) {
    std::optional<int64_t> n = g->as_integer();
    if (!n) return k8s_error(400, "BadRequest", "gracePeriodSeconds must be a whole number of seconds");
    o.grace_seconds = n;
  }
  return o;
}

std::variant<DeleteOptions, HttpResponse> delete_options_of(const HttpRequest& request) {
  auto in_query = delete_options_in_query(request.query());
  if (std::holds_alternative<HttpResponse>(in_query) || request.body.empty()) return in_query;
  std::string error;
  auto options = JsonValue::parse(request.body, &error);  // a DELETE's DeleteOptions
  return delete_options_in(options ? &*options : nullptr, std::get<DeleteOptions>(in_query));
}

std::variant<bool, HttpResponse> dry_run_of(const HttpRequest& request) {
  auto in_query = dry_run_in_query(request.query());
  if (std::holds_alternative<HttpResponse>(in_query) || request.body.empty()) return in_query;
  std::string error;
  auto options = JsonValue::parse(request.body, &error);  // a DELETE's DeleteOptions
  return dry_run_in_options(options ? &*options : nullptr, std::get<bool>(in_query));
}

std::optional<HttpResponse> refuse_dry_run(const HttpRequest& request) {
  auto dry = dry_run_of(request);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return std::move(*refused);
  if (!std::get<bool>(dry)) return std::nullopt;
  return k8s_error(400, "BadRequest", "dryRun is not supported for this request by uvsched");
}

std::variant<ApplyRequest, HttpResponse> read_apply_request(const HttpRequest& request, std::string_view type,
                                                            std::string_view kind, const std::string& name) {
  auto options = write_options(request.query(), /*apply=*/true);
  if (auto* refused = std::get_if<HttpResponse>(&options)) return std::move(*refused);
  std::string error;
  auto config = JsonValue::parse(request.body, &error);
  if (!config) {
    return k8s_error(400, "BadRequest",
                     "uvsched reads an apply configuration written as JSON "
                     "(as kubectl and client-go send it), not block YAML: " +
                         error);
  }
  if (!config->is_object()) return k8s_error(400, "BadRequest", "an apply configuration must be an object");
  ApplyRequest out{std::get<WriteOptions>(std::move(options)), std::move(*config), {}};
  if (auto refused = decode_body(request, out.config, type, kind, &out.warnings)) return std::move(*refused);
  if (out.config.str("apiVersion") != "v1" || out.config.str("kind") != kind) {
    return k8s_error(400, "BadRequest",
                     "an apply configuration here needs apiVersion \"v1\" and kind \"" + std::string(kind) +
                         "\", not \"" + out.config.str("apiVersion") + "\" and \"" + out.config.str("kind") + "\"");
  }
  if (std::string given = out.config.ensure({"metadata"}).str("name"); given != name) {
    return k8s_error(400, "BadRequest",
                     "the name of the object (" + given + ") does not match the name on the URL (" + name + ")");
  }
  return out;
}

// 409 naming each field another manager set, and who, as the API server does
// (kubectl prints it and suggests --force-conflicts).
HttpResponse apply_conflicts(const std::vector<ApplyConflict>& conflicts, const std::string& name) {
  std::vector<FieldIssue> causes;
  for (const auto& c : conflicts) {
    causes.push_back({display_path(c.path), "FieldManagerConflict", "conflict with \"" + c.manager + "\" using v1"});
  }
  return k8s_error_with_causes(409, "Conflict", apply_conflict_message(conflicts), causes, "pods", name);
}

}  // namespace uvsched
