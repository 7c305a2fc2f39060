// What a pod looks like as uvsched stores it, for the embedded store's value
// dictionary (storage/value_codec.h): pods differ from this in a few fields,
// so against it each one packs to ~100 B instead of ~740 B. Only the size of
// the packed values depends on it; any pod packs and unpacks correctly.
#pragma once

#include <string>

namespace uvsched {

std::string pod_value_dictionary();

}  // namespace uvsched
