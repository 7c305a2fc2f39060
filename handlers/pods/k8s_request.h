// What every Kubernetes write request to the registry is checked for before
// its body is used, in the API server's words: the media type, the
// fieldValidation parameter and the typed decoding it governs, a patch's
// type, fieldManager and force; and the replies those checks give (a store
// that is down, Warning headers, a server-side apply's conflicts).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/field_manager.h"
#include "handlers/pods/typed_decode.h"
#include "reactor/http_message.h"
#include "storage/store.h"

namespace uvsched {

// 503 ServiceUnavailable naming why the store failed.
HttpResponse store_down(const StoreStatus& st);
// A query's boolean as the API server reads it (apimachinery's
// Convert_Slice_string_To_bool): absent, "0" or "false" in any case is false;
// anything else is true, an empty value too (`?watch`, as curl users write it).
bool query_flag(std::string_view query, std::string_view name);
// How long a watch lasts, from its timeoutSeconds (already checked by
// refuse_bad_list_options): nullopt when none is given, or 0 (until the
// client leaves); 0 ms for a negative one, which the API server's timer ends
// at once; at most a year, so that no count of milliseconds overflows.
std::optional<uint64_t> watch_timeout_ms(std::string_view query);
// The list options as the API server reads them: the integers (limit,
// timeoutSeconds; Go's strconv.ParseInt) and resourceVersion (ParseUint)
// else a 400 in its words; resourceVersionMatch and sendInitialEvents as
// apimachinery's ValidateListOptions takes them (without WatchList), else
// a 422 naming each issue.
std::optional<HttpResponse> refuse_bad_list_options(std::string_view query);
// 415 for a body in a media type the registry does not decode (protobuf_too:
// this route also takes protobuf); nullopt when it may be read as JSON.
std::optional<HttpResponse> refuse_media_type(const HttpRequest& request, bool protobuf_too = false);
// The body is Kubernetes protobuf (what client-go's typed clients send).
bool sends_protobuf(const HttpRequest& request);
// The request's fieldValidation, or the 400 for a value it may not have.
std::variant<FieldValidation, HttpResponse> field_validation_of(const HttpRequest& request);
// The 400 for a body the typed decoder refused, every cause named.
HttpResponse typed_refusal(const TypedDecode& decoded, FieldValidation mode, std::string_view kind,
                           std::string_view name);
// The typed decoding of a body as `type` (typed_decode.h), under the
// request's fieldValidation: the refusal, or nullopt with the Warning values.
std::optional<HttpResponse> decode_body(const HttpRequest& request, JsonValue& body, std::string_view type,
                                        std::string_view kind, std::vector<std::string>* warnings);
HttpResponse with_warnings(HttpResponse r, const std::vector<std::string>& warnings);
// A Warning header's value as the API server writes one (RFC 7234's warn-code
// 299, no agent, the text quoted), which is what client-go shows its user.
std::string k8s_warning(std::string_view text);

enum class PatchType { kJson, kMerge, kStrategic, kApply };
std::optional<PatchType> patch_type(const std::string* content_type);

// The write's field manager (fieldManager), which an apply must name, and
// whether it forces conflicts (force, for an apply only); or the 422 the API
// server answers for options it refuses.
struct WriteOptions {
  std::string manager;  // empty: none named (not for an apply)
  bool force = false;
  bool dry_run = false;  // dryRun=All: everything but the write
};
// A request's dryRun, in its query or (a DELETE's DeleteOptions) its body:
// false when absent, true for All, or the 400 the API server answers for
// any other value.
std::variant<bool, HttpResponse> dry_run_of(const HttpRequest& request);
// What a delete asks, in its query and its DeleteOptions body (the body's
// wins, as the API server reads them): dryRun (All, or absent), and
// gracePeriodSeconds (nullopt when absent); or the 400 for a value refused.
struct DeleteOptions {
  bool dry_run = false;
  std::optional<int64_t> grace_seconds;
};
std::variant<DeleteOptions, HttpResponse> delete_options_of(const HttpRequest& request);
// The query's part alone, and a DeleteOptions object (null: none) read over
// it (an Eviction carries its DeleteOptions inside).
std::variant<DeleteOptions, HttpResponse> delete_options_in_query(std::string_view query);
std::variant<DeleteOptions, HttpResponse> delete_options_in(const JsonValue* options, DeleteOptions from_query);
// The 400 for a write that uvsched does not dry-run (bindings, namespaces).
std::optional<HttpResponse> refuse_dry_run(const HttpRequest& request);
std::variant<WriteOptions, HttpResponse> write_options(std::string_view query, bool apply);

// A server-side apply (PATCH, application/apply-patch+yaml) read as the API
// server reads it: its options, and its configuration, a JSON object (JSON
// is YAML, and what kubectl, client-go and controller-runtime send) of
// apiVersion v1 and `kind`, named `name`, decoded as `type` under the
// request's fieldValidation.
struct ApplyRequest {
  WriteOptions options;
  JsonValue config;
  std::vector<std::string> warnings;
};
std::variant<ApplyRequest, HttpResponse> read_apply_request(const HttpRequest& request, std::string_view type,
                                                            std::string_view kind, const std::string& name);
// 409 naming each field another manager set, and who, as the API server does.
HttpResponse apply_conflicts(const std::vector<ApplyConflict>& conflicts, const std::string& name);

}  // namespace uvsched
