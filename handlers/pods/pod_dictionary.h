// What a pod looks like as uvsched stores it, for the stores' value
// dictionary (storage/value_codec.h): pods differ from it in a few fields, so
// against it each one packs to ~120 B instead of ~740 B. Only the size of the
// packed values (and the time to pack them) depends on it; any pod packs and
// unpacks correctly.
#pragma once

#include <string>
#include <vector>

namespace uvsched {

// A zstd dictionary: entropy tables, then the content below.
std::string pod_value_dictionary();

// Typical pods as text: the dictionary's content.
std::string pod_value_dictionary_content();

// The dictionaries of earlier releases, newest first: values packed against
// them (in etcd) stay readable.
std::vector<std::string> pod_value_dictionaries_before();

}  // namespace uvsched
