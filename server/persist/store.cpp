#include "persist/store.hpp"

namespace zone::persist {

StoreStatus Store::load_rows(std::span<const std::string> keys, std::vector<LoadedRow>& rows) {
  rows.clear();
  for (const std::string& key : keys) {
    StoreStatus status;
    rows.push_back(load_row(key, status));
    if (!status.ok) {
      rows.clear();
      return status;
    }
  }
  return {};
}

StoreStatus Store::save(std::span<const CharacterRecord> records) {
  std::vector<RowWrite> rows;
  rows.reserve(records.size());
  for (const CharacterRecord& r : records) rows.push_back({.record = &r, .claim = true});
  std::vector<RowOutcome> outcomes;
  return write_rows(rows, outcomes);
}

}  // namespace zone::persist
