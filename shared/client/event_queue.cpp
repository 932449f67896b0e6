#include "client/event_queue.hpp"

#include <utility>

namespace zone::client {

ClientEvent& EventQueue::push() {
  if (size_ == ring_.size()) {
    // Unroll the ring into a larger one, oldest first.
    std::vector<ClientEvent> grown(ring_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) grown[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    ring_ = std::move(grown);
    head_ = 0;
  }
  ClientEvent& e = ring_[(head_ + size_) % ring_.size()];
  ++size_;
  std::vector<std::uint32_t> members = std::move(e.members);
  std::string text = std::move(e.text), name = std::move(e.name);
  members.clear();
  text.clear();
  name.clear();
  e = ClientEvent{};
  e.members = std::move(members);
  e.text = std::move(text);
  e.name = std::move(name);
  return e;
}

const ClientEvent* EventQueue::pop() {
  if (size_ == 0) return nullptr;
  const ClientEvent* e = &ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  --size_;
  return e;
}

}  // namespace zone::client
