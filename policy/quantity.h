// Kubernetes resource quantities ("500m", "2", "0.5", "128Mi", "1Gi", "1e3",
// "1.5G") parsed exactly, to thousandths of a unit (milli-units), rounding up
// the way the API server does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace uvsched {

// nullopt when the text is not a quantity or does not fit.
std::optional<int64_t> parse_quantity_milli(std::string_view text);

// A count of milli-units as the API server writes it: whole units bare
// ("4"), else milli-units ("2500m").
std::string format_quantity_milli(int64_t milli);

}  // namespace uvsched
