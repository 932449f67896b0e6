// The documented order of one tick's events for lists rebuilt together (GridAoi::update):
// by ascending slot of the observer whose list is rebuilt, each with its enters before its
// leaves; the event of a mutual pair the other way round comes right after its owner's.
#pragma once

#include "aoi/grid_aoi.hpp"

#include <cstddef>
#include <string>

namespace zone::aoi::test {

// Empty when `events` (VisibilityEvent or alike: observer, target, kind) follow that
// order; else what breaks it first.
template <typename Events>
std::string rebuild_order_error(const Events& events) {
  std::uint32_t owner = 0;  // the list whose events are running
  bool in_leaves = false;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    // The other way round of the event before it: part of that list's events.
    if (i > 0 && events[i - 1].observer == e.target && events[i - 1].target == e.observer &&
        events[i - 1].kind == e.kind && events[i - 1].observer.index == owner) {
      continue;
    }
    if (i > 0 && e.observer.index < owner) {
      return "event " + std::to_string(i) + " breaks the ascending observer order";
    }
    if (i == 0 || e.observer.index != owner) in_leaves = false;
    if (e.kind == EventKind::kLeave) in_leaves = true;
    if (e.kind == EventKind::kEnter && in_leaves) {
      return "event " + std::to_string(i) + ": an enter after a leave of the same observer";
    }
    owner = e.observer.index;
  }
  return {};
}

}  // namespace zone::aoi::test
