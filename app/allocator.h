// The malloc the daemon program runs on (and the agent simulator, which shares
// a benchmark's cores with it). Which allocator a process uses is the
// program's choice, not the library's: the core links none, so a program that
// embeds it keeps its own.
#pragma once

namespace uvsched {

// What the daemon allocates with, for its start-up log: "jemalloc <version>"
// or "system".
const char* allocator_name();

}  // namespace uvsched
