// Unpredictable numbers for ids another party must not guess (task and offer
// ids): the kernel's CSPRNG through getrandom(2), read a page at a time so a
// pod storm does not make a system call per id. Loop thread only.
#pragma once

#include <cstdint>

namespace uvsched {

uint64_t secure_random_u64();

}  // namespace uvsched
