#include "zone/character_store.hpp"

#include <stdexcept>

#include "config/secret_file.hpp"
#include "persist/record.hpp"

namespace zone {

std::unique_ptr<CharacterStore> CharacterStore::open(const config::ZoneConfig& config,
                                                     const world::World& world, Logger& log,
                                                     std::string conninfo) {
  if (!config.persist.enabled) return nullptr;
  persist::WriterParams params;
  params.path = config.persist.path;
  params.max_queue = config.persist.max_queue;
  const bool postgres = config.persist.backend == config::PersistBackend::kPostgres;
  std::string where = params.path;
  if (postgres) {
    params.backend = persist::Backend::kPostgres;
    params.owner = config.name;  // unique in a world (the world map refuses duplicates)
    if (conninfo.empty()) {
      if (auto errors = config::read_conninfo_file(config, conninfo); !errors.empty()) {
        throw std::runtime_error("character store: persist.conninfo_file: " +
                                 errors.front().message);
      }
    }
    params.conninfo = std::move(conninfo);
  }
  std::string error;
  std::unique_ptr<persist::Writer> writer = persist::Writer::start(params, error);
  if (!writer) throw std::runtime_error("character store: " + error);
  if (postgres) where = writer->describe();
  log.info("character store: {} ({}, checkpoint every {} s, {} persistent properties)", where,
           postgres ? "PostgreSQL, rows owned by zone '" + config.name + "'" : "SQLite",
           config.persist.checkpoint_seconds, [&] {
             std::size_t n = 0;
             for (const auto& f : world.game().schema.fields()) n += f.persistent ? 1 : 0;
             return n;
           }());
  return std::unique_ptr<CharacterStore>(
      new CharacterStore(std::move(writer), config, std::move(where)));
}

CharacterStore::CharacterStore(std::unique_ptr<persist::Writer> writer,
                               const config::ZoneConfig& config, std::string where)
    : writer_(std::move(writer)),
      path_(std::move(where)),
      checkpoint_ticks_(
          std::max<std::uint32_t>(1, config.persist.checkpoint_seconds * config.tick.rate_hz)),
      load_timeout_(config.persist.load_timeout_ms) {}

void CharacterStore::request_load(std::uint64_t request, std::uint64_t character_id,
                                  std::string_view name) {
  writer_->load(request, persist::character_key(character_id, name));
}

persist::CharacterRecord CharacterStore::record_of(const world::World& world,
                                                   std::uint32_t slot) const {
  const world::Entity& e = world.entity(slot);
  const protocol::Schema& schema = world.game().schema;
  persist::CharacterRecord r;
  r.key = persist::character_key(e.character, e.name);
  r.type = schema.types()[e.type].name;
  r.x = e.x;
  r.y = e.y;
  const auto values = world.properties(slot);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const protocol::FieldSpec& f = schema.field(protocol::kEngineFieldCount + i);
    if (f.persistent) r.properties.push_back({f.name, values[i]});
  }
  r.party_key = world.parties().key_of(e.party);
  r.guild_key = world.guilds().key_of(e.guild);
  return r;
}

void CharacterStore::restore(world::World& world, std::uint32_t slot,
                             const persist::CharacterRecord& r) {
  const protocol::Schema& schema = world.game().schema;
  // By name: a row outlives a game data file whose rows were reordered. A type or
  // property the game no longer has (or no longer persists) is left at its default.
  if (const auto type = schema.find_type(r.type); type && *type != world.entity(slot).type) {
    world.set_player_type(slot, static_cast<std::uint16_t>(*type));
  }
  for (const persist::Property& p : r.properties) {
    const auto row = schema.find_field(p.name);
    if (!row || *row < protocol::kEngineFieldCount || !schema.field(*row).persistent) continue;
    world.set_property(slot, *row - protocol::kEngineFieldCount, p.value);
  }
  // Outside the zone (its rectangle changed) or inside an object (a new map): the random
  // spawn point stands.
  world.teleport(slot, r.x, r.y);
}

void CharacterStore::save(const world::World& world, std::uint32_t slot, bool leaving) {
  persist::CharacterRecord r = record_of(world, slot);
  if (leaving) {
    last_saves_.erase(r.key);
    writer_->save(std::move(r), /*force=*/true);
    return;
  }
  persist::CharacterRecord copy = r;
  const std::uint64_t sequence = writer_->save(std::move(r), /*force=*/false);
  if (sequence == 0) {
    ++put_off_;
    return;
  }
  LastSave& last = last_saves_[copy.key];
  last.record = std::move(copy);
  last.sequence = sequence;
  last.at = std::chrono::system_clock::now();
}

void CharacterStore::arrive(const world::World& world, std::uint32_t slot) {
  writer_->arrive(record_of(world, slot));
}

void CharacterStore::hand_over(const world::World& world, std::uint32_t slot, std::string_view to) {
  writer_->hand_over(record_of(world, slot), std::string(to));
}

void CharacterStore::checkpoint(const world::World& world, std::uint32_t tick) {
  // Slots s with s = tick (mod checkpoint ticks): each slot once per interval, and a full
  // zone's saves spread evenly over its ticks.
  const std::uint32_t n = world.slot_count();
  for (std::uint32_t s = tick % checkpoint_ticks_; s < n; s += checkpoint_ticks_) {
    const world::Entity& e = world.entity(s);
    if (!e.live() || e.ghost || e.kind != world::EntityKind::kPlayer) continue;
    save(world, s, /*leaving=*/false);
  }
}

}  // namespace zone
