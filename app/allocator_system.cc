// The daemon on the C library's malloc: builds with sanitizers (which bring
// their own) and -Dallocator=system.
#include "app/allocator.h"

namespace uvsched {

const char* allocator_name() { return "system"; }

}  // namespace uvsched
