#include "net/enet_memory.hpp"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace zone::net::enet_memory {
namespace {

// Each block is preceded by a header naming its class, kept 16 bytes so the block stays
// as aligned as malloc's.
struct alignas(16) Header {
  std::uint32_t size_class;
};
constexpr std::uint32_t kLarge = 0xFFFFFFFFu;
constexpr std::array<std::size_t, 7> kClassSizes = {32, 64, 128, 256, 512, 1024, 2048};
// A thread keeps at most this many free blocks per class; more go back to malloc.
constexpr std::size_t kMaxFreePerClass = 1 << 16;

struct FreeBlock {
  FreeBlock* next;
};

// Set once a thread's lists are gone (thread exit): later calls use malloc directly.
thread_local bool t_lists_gone = false;

struct ThreadLists {
  std::array<FreeBlock*, kClassSizes.size()> head{};
  std::array<std::size_t, kClassSizes.size()> count{};
  Counters counters;
  ~ThreadLists() {
    t_lists_gone = true;
    for (FreeBlock* b : head) {
      while (b != nullptr) {
        FreeBlock* next = b->next;
        std::free(reinterpret_cast<Header*>(b) - 1);
        b = next;
      }
    }
  }
};

ThreadLists& lists() {
  thread_local ThreadLists l;
  return l;
}

std::uint32_t class_of(std::size_t size) {
  for (std::uint32_t c = 0; c < kClassSizes.size(); ++c) {
    if (size <= kClassSizes[c]) return c;
  }
  return kLarge;
}

}  // namespace

void* allocate(std::size_t size) {
  const std::uint32_t c = class_of(size);
  if (t_lists_gone) {
    auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + size));
    if (h == nullptr) return nullptr;
    h->size_class = kLarge;
    return h + 1;
  }
  ThreadLists& l = lists();
  if (c != kLarge && l.head[c] != nullptr) {
    FreeBlock* b = l.head[c];
    l.head[c] = b->next;
    --l.count[c];
    ++l.counters.recycled;
    return b;
  }
  ++l.counters.fresh;
  const std::size_t bytes = sizeof(Header) + (c == kLarge ? size : kClassSizes[c]);
  auto* h = static_cast<Header*>(std::malloc(bytes));
  if (h == nullptr) return nullptr;  // ENet reports it through its no_memory callback
  h->size_class = c;
  return h + 1;
}

void release(void* block) {
  if (block == nullptr) return;
  Header* h = static_cast<Header*>(block) - 1;
  const std::uint32_t c = h->size_class;
  if (c == kLarge || t_lists_gone) {
    std::free(h);
    return;
  }
  ThreadLists& l = lists();
  if (l.count[c] >= kMaxFreePerClass) {
    std::free(h);
    return;
  }
  auto* b = static_cast<FreeBlock*>(block);
  b->next = l.head[c];
  l.head[c] = b;
  ++l.count[c];
}

Counters thread_counters() {
  return lists().counters;
}

}  // namespace zone::net::enet_memory
