// The process's open-file limit, which bounds the daemon's connections: every
// connection, each way, is a descriptor. Past the limit the kernel refuses
// accept() and libuv closes the connection unanswered, with no word to us or
// to the client; the daemon's own --max-connections answers 503 with
// Retry-After instead, so that one must be reached first.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#include "reactor/http_server.h"

namespace uvsched {

struct OpenFilesLimit {
  uint64_t soft = 0;         // what the process may open now
  uint64_t hard = 0;         // what it may raise that to
  uint64_t raised_from = 0;  // the soft limit before raise_open_files_limit(), when it raised it
};

// The limit now (getrlimit: no blocking, fine on the loop).
OpenFilesLimit open_files_limit();

// Raises the soft limit to the hard one, as Go's runtime does for every Go
// program since 1.19 (KubeML's scheduler among them): a login shell's soft
// limit is 1,024, under --max-connections' default. Process-wide, so the
// daemon's main calls it; a program embedding the library decides for itself.
OpenFilesLimit raise_open_files_limit();

// Descriptors kept back from the listeners for what the daemon opens itself:
// `calls_out`, the most its calls to other servers can hold (the PS, the
// function router, etcd), plus 64 for its files and the loop's own; but no
// more than half the limit, since each connection in leads to at most one
// out (a train job's /job to its /update, a watch to its etcd stream).
uint64_t open_files_kept_back(uint64_t limit, uint64_t calls_out);

// The connections each of `listeners` (one or more) may hold within `limit` descriptors:
// limits.max_connections, or fewer when descriptors would run out first
// (each listener may also hold limits.over_limit_reserve past its maximum,
// and needs one more to answer the 503). At least 1.
size_t connections_within(uint64_t limit, size_t listeners, const ServerLimits& limits, uint64_t calls_out);

}  // namespace uvsched
