// Whether this build runs under AddressSanitizer: freed memory waits in a
// quarantine (256 MiB) and the loop runs about three times slower, so the
// tests that bound memory or latency bound them more loosely there; the
// plain and release builds check the goals.
#pragma once

namespace uvsched::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace uvsched::test
