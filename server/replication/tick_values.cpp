#include "replication/tick_values.hpp"

#include "replication/entity_values.hpp"

namespace zone::replication {

void TickValues::fill(const world::World& world) {
  const protocol::Schema& schema = world.game().schema;
  stride_ = schema.size();
  const bool private_rows = schema.public_mask() != schema.all_mask();
  views_ = private_rows ? 3 : 1;
  rows_.resize(static_cast<std::size_t>(world.slot_count()) * views_ * stride_);
  zeros_.assign(stride_, 0);
  world.for_each_entity([&](std::uint32_t slot, const world::Entity&) {
    const std::size_t row = static_cast<std::size_t>(slot) * views_ * stride_;
    const protocol::MutableValues full{rows_.data() + row, stride_};
    entity_values(world, slot, full);
    if (!private_rows) return;
    // The party's and everyone's views: the rows they may not receive read 0, so a
    // client's frame holds exactly what it was sent.
    for (std::uint32_t v = 1; v < 3; ++v) {
      const std::uint64_t keep = v == static_cast<std::uint32_t>(RowView::kParty)
                                     ? schema.party_mask()
                                     : schema.public_mask();
      std::int32_t* out = rows_.data() + row + v * stride_;
      for (std::size_t i = 0; i < stride_; ++i) out[i] = (keep >> i) & 1 ? full[i] : 0;
    }
  });
}

}  // namespace zone::replication
