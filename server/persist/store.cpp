#include "persist/store.hpp"

namespace zone::persist {

StoreStatus Store::save(std::span<const CharacterRecord> records) {
  std::vector<RowWrite> rows;
  rows.reserve(records.size());
  for (const CharacterRecord& r : records) rows.push_back({.record = &r, .claim = true});
  std::vector<RowOutcome> outcomes;
  return write_rows(rows, outcomes);
}

}  // namespace zone::persist
