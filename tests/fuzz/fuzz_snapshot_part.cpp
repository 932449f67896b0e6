// libFuzzer target: snapshot parts as a client decodes them (protocol v7, channel 1), in
// the schema of seed_schema.hpp.
//
// Input: byte 0 is the client's own entity id (0 to 255; ReplicaLimits::self_id), the rest
// a sequence of snapshot parts separated by kSeparator ("\xF5PRT", tests/fuzz/
// snapshot_part.dict), fed in order to protocol::parse_snapshot_part and to one
// replica::FrameReplica, so that multi-part frames, baselines and the frame history get
// exercised. Besides "no crash, no sanitizer report", every part must satisfy:
//   - the parser and the replica agree: a part the parser refuses is exactly one kMalformed
//     violation and changes nothing; a part it accepts is never a kMalformed violation;
//   - re-writing an accepted part with SnapshotPartWriter from the parsed values (self and
//     changes against an all-zero baseline, whose values are then the wire values
//     themselves, spawns from their values) parses to the same records, is never longer
//     than the original and, when it is as long, is the original byte for byte (the
//     writer is the canonical encoding: minimal varints, a spawn's mask = its non-zero
//     fields; anything else the parser accepts is strictly longer);
//   - the replica does with each accepted part exactly what a model kept by this harness
//     (a std::map per frame, docs/protocol.md's "Rebuilding a frame") says: a part of a
//     tick not newer than the current frame is ignored; parts of one tick wait until all
//     have arrived (duplicates ignored, disagreeing ones a kInconsistentParts violation);
//     then the frame is rebuilt on its baseline (an unknown one: a kUnknownBaseline
//     violation and no frame), despawns removed, changes applied, spawns added, with one
//     violation for each change beyond the baseline, index or self record given twice,
//     spawn of the client's own id and spawn of an id already in the frame; entity values,
//     own values and spawn infos must match the model's (impossible-jump violations are
//     left to the replica: the model does not time movement);
//   - the replica stays consistent: the acknowledged tick never goes back and moves
//     exactly when apply() says a frame completed; the current frame is sorted by id,
//     never holds id 0 or the client's own id, and is the one frame_at() returns;
//     last_input_sequence() is the one of the newest tick's part.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/compact.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"
#include "replica/frame_replica.hpp"
#include "seed_schema.hpp"

namespace {

namespace protocol = zone::protocol;
namespace replica = zone::replica;
using protocol::SnapshotPart;
using FieldValues = std::vector<std::int32_t>;  // one value per schema row
using replica::Violation;

constexpr std::uint8_t kSeparator[] = {0xF5, 'P', 'R', 'T'};
constexpr double kMaxSpeed = 10.0;
constexpr std::uint32_t kTickRate = 20;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_snapshot_part: property violated: %s\n", what);
    std::abort();
  }
}

// Every input is read in one schema (seed_schema.hpp).
const protocol::Schema& schema() {
  return zone::fuzz::seed_schema();
}
FieldValues zeros() {
  return FieldValues(schema().size(), 0);
}

FieldValues applied(std::uint64_t mask, const std::uint32_t* wire, FieldValues values = zeros()) {
  protocol::fields::apply(schema(), mask, wire, values);
  return values;
}

// A record's wire values (one per mask bit, in row order) are the same.
bool same_wire(std::uint64_t mask, const std::uint32_t* a, const std::uint32_t* b) {
  return std::equal(a, a + std::popcount(mask), b);
}

bool same_values(protocol::Values a, protocol::Values b) {
  return std::ranges::equal(a, b);
}

bool same_entities(const replica::EntityList& a, const replica::EntityList& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.id(i) != b.id(i) || !same_values(a.values(i), b.values(i))) return false;
  }
  return true;
}

// ---- Re-writing an accepted part --------------------------------------------------------

void check_rewrite(std::span<const std::uint8_t> original, const SnapshotPart& part) {
  // As long as the original at most: the writer overflows if it needs more.
  std::vector<std::uint8_t> buf(original.size());
  protocol::SnapshotPartWriter w(buf, schema());
  w.header(part.header);
  if (part.header.flags & protocol::kSnapshotHasSelf) {
    w.self(part.self_mask, {}, applied(part.self_mask, part.wire_at(part.self_wire_begin)));
  }
  w.begin_changes(static_cast<std::uint32_t>(part.changes.size()));
  for (const protocol::ChangeRecord& c : part.changes) {
    if (c.mask == 0) {
      w.despawn(c.index);
    } else {
      w.change(c.index, c.mask, {}, applied(c.mask, part.wire_at(c.wire_begin)));
    }
  }
  w.begin_spawns(static_cast<std::uint32_t>(part.spawns.size()));
  for (const protocol::SpawnRecord& s : part.spawns) {
    w.spawn(s.id, s.type, s.name, applied(s.mask, part.wire_at(s.wire_begin)));
  }
  require(!w.overflow(), "a re-written part is no longer than the original");
  const auto again = w.bytes();
  if (again.size() == original.size()) {
    require(std::equal(again.begin(), again.end(), original.begin()),
            "a re-written part as long as the original is the original");
  }

  SnapshotPart back;
  require(protocol::parse_snapshot_part(again, schema(), back) == protocol::ParseError::kNone,
          "a re-written part parses");
  const auto& h = part.header;
  const auto& h2 = back.header;
  require(h2.server_tick == h.server_tick && h2.last_input_sequence == h.last_input_sequence &&
              h2.baseline_age == h.baseline_age && h2.part == h.part &&
              h2.part_count == h.part_count && h2.flags == h.flags,
          "a re-written part keeps its header");
  if (h.flags & protocol::kSnapshotHasSelf) {
    require(back.self_mask == part.self_mask &&
                same_wire(part.self_mask, back.wire_at(back.self_wire_begin),
                          part.wire_at(part.self_wire_begin)),
            "a re-written part keeps its self record");
  }
  require(back.changes.size() == part.changes.size(), "a re-written part keeps its changes");
  for (std::size_t i = 0; i < part.changes.size(); ++i) {
    const auto& a = part.changes[i];
    const auto& b = back.changes[i];
    require(a.index == b.index && a.mask == b.mask &&
                same_wire(a.mask, part.wire_at(a.wire_begin), back.wire_at(b.wire_begin)),
            "a re-written change is the same change");
  }
  require(back.spawns.size() == part.spawns.size(), "a re-written part keeps its spawns");
  for (std::size_t i = 0; i < part.spawns.size(); ++i) {
    const auto& a = part.spawns[i];
    const auto& b = back.spawns[i];
    require(a.id == b.id && a.type == b.type && a.name == b.name &&
                applied(a.mask, part.wire_at(a.wire_begin)) ==
                    applied(b.mask, back.wire_at(b.wire_begin)),
            "a re-written spawn is the same spawn");
    require(b.mask == protocol::fields::nonzero_mask(applied(b.mask, back.wire_at(b.wire_begin))),
            "a written spawn carries exactly its non-zero fields");
  }
}

// ---- What the replica must make of each part ------------------------------------------

// A frame whose parts are all here, rebuilt as docs/protocol.md says ("Rebuilding a
// frame"), with the violations a client counts (in the order FrameReplica reports them:
// part by part, then duplicate spawns by id). Which values an entity spawned twice in
// one frame ends up with is not specified: only its presence is.
struct Expected {
  bool frame = false;  // a frame is rebuilt (its baseline is held)
  FieldValues self = zeros();
  std::map<std::uint32_t, std::optional<FieldValues>> entities;
  struct Info {
    std::uint16_t type;
    std::string name;
  };
  std::map<std::uint32_t, Info> info;                // the last spawn of each id
  std::vector<replica::ViolationRecord> violations;  // kImpossibleJump left out
};

Expected rebuild(const replica::FrameReplica& r, std::span<const SnapshotPart> parts,
                 std::uint32_t self_id) {
  Expected x;
  const std::uint32_t tick = parts[0].header.server_tick;
  const std::uint32_t baseline = parts[0].header.baseline_tick();
  auto violation = [&](Violation v, std::uint32_t id) { x.violations.push_back({v, tick, id}); };
  const replica::Frame* base = nullptr;
  if (baseline != 0) {
    base = r.frame_at(baseline);
    if (base == nullptr) {
      violation(Violation::kUnknownBaseline, baseline);
      return x;
    }
  }
  x.frame = true;
  if (base != nullptr) {
    x.self = base->self;
    for (const replica::EntityView e : base->entities) {
      x.entities[e.id] = FieldValues(e.values.begin(), e.values.end());
    }
  }
  const std::size_t held = base != nullptr ? base->entities.size() : 0;
  std::vector<std::uint8_t> touched(held, 0);                    // 1 changed, 2 despawned
  std::map<std::uint32_t, std::pair<int, FieldValues>> spawned;  // times, values
  bool self_seen = false;
  for (const SnapshotPart& part : parts) {
    if (part.header.flags & protocol::kSnapshotHasSelf) {
      if (self_seen) {
        violation(Violation::kInconsistentParts, self_id);  // a second self record
      } else {
        x.self = applied(part.self_mask, part.wire_at(part.self_wire_begin), x.self);
      }
      self_seen = true;
    }
    for (const protocol::ChangeRecord& c : part.changes) {
      if (c.index >= held) {
        violation(c.mask == 0 ? Violation::kDespawnUnknown : Violation::kDeltaForUnknown, c.index);
        continue;
      }
      const std::uint32_t id = base->entities.id(c.index);
      if (touched[c.index] != 0) {
        violation(Violation::kInconsistentParts, id);  // named twice in the frame
        continue;
      }
      touched[c.index] = c.mask == 0 ? 2 : 1;
      if (c.mask != 0)
        x.entities[id] = applied(c.mask, part.wire_at(c.wire_begin), *x.entities[id]);
    }
    for (const protocol::SpawnRecord& s : part.spawns) {
      if (s.id == self_id) {
        violation(Violation::kSelfInView, s.id);
        continue;
      }
      auto& [times, values] = spawned[s.id];
      ++times;
      values = applied(s.mask, part.wire_at(s.wire_begin));
      x.info[s.id] = {s.type, std::string(s.name)};
    }
  }
  for (std::size_t i = 0; i < held; ++i) {
    if (touched[i] == 2) x.entities.erase(base->entities.id(i));
  }
  for (const auto& [id, spawn] : spawned) {
    int duplicates = spawn.first;
    if (x.entities.count(id) == 0) {
      x.entities[id] = spawn.first == 1 ? std::optional(spawn.second) : std::nullopt;
      --duplicates;
    }
    for (int k = 0; k < duplicates; ++k) violation(Violation::kDuplicateSpawn, id);
  }
  return x;
}

// The harness's own account of the frames in flight, parts by index as first received.
// Like FrameReplica it keeps at most kMaxPending incomplete frames, abandoning the oldest
// for a new one, and forgets every frame up to a tick whose parts all arrived.
struct Pending {
  std::uint32_t tick = 0;
  std::uint8_t baseline_age = 0;
  std::uint8_t part_count = 0;
  std::vector<std::vector<std::uint8_t>> parts;
  std::size_t received = 0;
};
constexpr std::size_t kMaxPending = 8;

// What apply() must do with an accepted part of a tick newer than the current frame:
// nothing yet, a kInconsistentParts violation, or rebuild a frame (`x`).
Expected expect(const replica::FrameReplica& r, std::vector<Pending>& pending,
                std::span<const std::uint8_t> packet, const SnapshotPart& part,
                std::uint32_t self_id) {
  const protocol::SnapshotHeader& h = part.header;
  if (h.part_count == 1) return rebuild(r, {&part, 1}, self_id);
  auto it = std::find_if(pending.begin(), pending.end(),
                         [&](const Pending& p) { return p.tick == h.server_tick; });
  if (it == pending.end()) {
    if (pending.size() >= kMaxPending) pending.erase(pending.begin());
    pending.push_back({h.server_tick, h.baseline_age, h.part_count, {}, 0});
    it = std::prev(pending.end());
    it->parts.resize(h.part_count);
  }
  Expected x;
  if (it->baseline_age != h.baseline_age || it->part_count != h.part_count) {
    x.violations.push_back({Violation::kInconsistentParts, h.server_tick, 0});
    return x;
  }
  auto& slot = it->parts[h.part];
  if (!slot.empty()) return x;  // a duplicate
  slot.assign(packet.begin(), packet.end());
  if (++it->received < it->part_count) return x;
  const Pending done = std::move(*it);
  std::erase_if(pending, [&](const Pending& p) { return p.tick <= h.server_tick; });
  std::vector<SnapshotPart> parts(done.parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    require(protocol::parse_snapshot_part(done.parts[i], schema(), parts[i]) ==
                protocol::ParseError::kNone,
            "a part parses every time");
  }
  return rebuild(r, parts, self_id);  // copies what it keeps of the names
}

void check_expected(const replica::FrameReplica& r, std::uint32_t tick, const Expected& x,
                    bool completed, std::span<const replica::ViolationRecord> added) {
  std::vector<replica::ViolationRecord> seen;
  for (const auto& v : added) {
    if (v.kind != Violation::kImpossibleJump) seen.push_back(v);
  }
  require(seen.size() == x.violations.size(), "the violations of a part, by count");
  for (std::size_t i = 0; i < seen.size(); ++i) {
    require(seen[i].kind == x.violations[i].kind &&
                seen[i].server_tick == x.violations[i].server_tick &&
                seen[i].entity_id == x.violations[i].entity_id,
            "the violations of a part, one by one");
  }
  require(completed == x.frame,
          "a frame completes when its last part arrives and its baseline is held");
  if (!x.frame) return;
  const replica::Frame& f = r.current();
  require(f.tick == tick, "the completed frame is the current one");
  require(f.self == x.self, "the completed frame's own values");
  require(f.entities.size() == x.entities.size(), "the completed frame's entities, by count");
  auto it = x.entities.begin();
  for (const replica::EntityView e : f.entities) {
    require(e.id == it->first && (!it->second || same_values(e.values, *it->second)),
            "the completed frame's entities, one by one");
    ++it;
  }
  for (const auto& [id, spawn] : x.info) {
    const replica::EntityInfo* info = r.info(id);
    require(info != nullptr && info->type == spawn.type &&
                info->kind == schema().types()[spawn.type].kind && info->name == spawn.name,
            "a spawned entity's info is its last spawn's");
  }
}

// ---- Invariants of the replica ------------------------------------------------------------

void check_replica(const replica::FrameReplica& r, std::uint32_t self_id) {
  const replica::Frame& f = r.current();
  require(f.updated.size() == f.entities.size(), "an update tick per entity");
  for (std::size_t i = 0; i < f.entities.size(); ++i) {
    require(f.entities.id(i) != 0, "no entity has id 0");
    require(self_id == 0 || f.entities.id(i) != self_id, "the own entity is not in view");
    require(i == 0 || f.entities.id(i - 1) < f.entities.id(i), "entities sorted by id");
    require(f.entities.values(i).size() == schema().size(), "a value per schema row");
    require(f.updated[i] != 0 && f.updated[i] <= f.tick, "an entity's values date from the past");
  }
  require(r.ack_tick() == f.tick, "the acknowledged tick is the current frame's");
  if (f.tick != 0) {
    const replica::Frame* stored = r.frame_at(f.tick);
    require(stored != nullptr && stored->self == f.self &&
                same_entities(stored->entities, f.entities) && stored->updated == f.updated,
            "the current frame is the stored one");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint32_t self_id = data[0];
  replica::FrameReplica r;
  r.reset({kMaxSpeed, kTickRate, self_id}, schema());
  const std::uint8_t* const end = data + size;
  const std::uint8_t* at = data + 1;
  std::uint32_t newest_tick = 0;
  std::uint32_t last_input = 0;
  std::vector<Pending> pending;
  SnapshotPart part;
  while (at <= end) {
    const std::uint8_t* next = std::search(at, end, std::begin(kSeparator), std::end(kSeparator));
    // Each part in a buffer of its own, as the network hands it over.
    const std::vector<std::uint8_t> packet(at, next);
    at = next == end ? end + 1 : next + sizeof kSeparator;

    const protocol::ParseError parsed = protocol::parse_snapshot_part(packet, schema(), part);
    const std::uint32_t ack = r.ack_tick();
    const std::size_t violations = r.violations().size();
    const std::uint32_t tick = part.header.server_tick;
    // Parts of ticks not newer than the current frame are ignored.
    Expected expected;
    if (parsed == protocol::ParseError::kNone && tick > ack) {
      expected = expect(r, pending, packet, part, self_id);
    }

    const bool completed = r.apply(packet);

    const std::span<const replica::ViolationRecord> added =
        std::span(r.violations()).subspan(violations);
    if (parsed != protocol::ParseError::kNone) {
      require(parsed == protocol::ParseError::kMalformed, "a part is well-formed or malformed");
      require(added.size() == 1 && added[0].kind == Violation::kMalformed,
              "a part the parser refuses is one kMalformed violation");
      require(!completed && r.ack_tick() == ack, "a refused part changes nothing");
    } else {
      for (const auto& v : added) {
        require(v.kind != Violation::kMalformed, "a part the parser accepts is not malformed");
      }
      check_rewrite(packet, part);
      if (tick >= newest_tick) {
        newest_tick = tick;
        last_input = part.header.last_input_sequence;
      }
      check_expected(r, tick, expected, completed, added);
    }
    require(r.last_input_sequence() == last_input, "the newest tick's last input sequence");
    require(r.ack_tick() >= ack, "the acknowledged tick never goes back");
    require(completed == (r.ack_tick() != ack), "a frame completes when the ack moves");
    require(!completed || r.ack_tick() == tick, "a completed frame is the part's tick");
    check_replica(r, self_id);
  }
  return 0;
}
