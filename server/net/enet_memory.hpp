// Memory for ENet's own allocations (packets, their data, queued commands), handed out
// from per-thread free lists by size class. A busy host allocates and frees a few of
// these per packet; recycling them keeps malloc off the send and receive paths once the
// lists have warmed up. Installed once per process by EnetLibrary.
#pragma once

#include <cstddef>

namespace zone::net::enet_memory {

void* allocate(std::size_t size);
void release(void* block);

// Blocks taken from and returned to the calling thread's lists (tests, metrics).
struct Counters {
  std::size_t recycled = 0;  // served from a free list
  std::size_t fresh = 0;     // served by malloc (a list was empty, or a large block)
};
Counters thread_counters();

}  // namespace zone::net::enet_memory
