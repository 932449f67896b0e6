// Writes the seed corpora of the protocol fuzz targets, from the protocol's own encoders:
//   CORPUS/client_packet   (fuzz_client_packet: byte 0 the channel, then the packet)
//     hellos (FlatBuffers, build_hello; with login tickets: one signed with the fuzz key
//     of seed_ticket.hpp, never expiring, and garbage), party and guild requests (build_join_party,
//     build_join_guild), actions and chat lines (build_action, build_chat) and inputs
//     (encode_input), edge values and
//     near-misses: wrong channels, wrong sizes, an unknown message type, oversize;
//   CORPUS/snapshot_part   (fuzz_snapshot_part: byte 0 the client's own id, then parts
//     separated by "\xF5PRT") sequences of parts written with SnapshotPartWriter: full
//     frames, frames on baselines, multi-part frames, the frame history's end, every
//     violation the replica checks, and malformed parts among good ones.
// Run it again (and commit the output) when the wire protocol changes:
//   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "auth/issue.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"
#include "seed_schema.hpp"
#include "seed_ticket.hpp"

namespace {

using namespace zone::protocol;
using Bytes = std::vector<std::uint8_t>;

void write(const std::filesystem::path& dir, const std::string& name, const Bytes& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// ---- client_packet ----------------------------------------------------------------------

Bytes on_channel(std::uint8_t channel, std::span<const std::uint8_t> packet) {
  Bytes out{channel};
  out.insert(out.end(), packet.begin(), packet.end());
  return out;
}

Bytes hello(std::uint16_t version, std::string_view name) {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, version, name);
  const auto b = bytes_of(fbb);
  return {b.begin(), b.end()};
}

Bytes input(std::uint32_t sequence, std::uint32_t ack_tick, float x, float y) {
  std::uint8_t b[kInputBytes];
  encode_input({sequence, ack_tick, x, y}, b);
  return {std::begin(b), std::end(b)};
}

Bytes hello_with_ticket(std::string_view name, std::span<const std::uint8_t> ticket) {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, kProtocolVersion, name, {}, ticket);
  const auto b = bytes_of(fbb);
  return {b.begin(), b.end()};
}

void client_packet_seeds(const std::filesystem::path& dir) {
  write(dir, "hello", on_channel(kReliableChannel, hello(kProtocolVersion, "alice")));
  {
    zone::auth::TicketClaims c;
    c.account_id = 1;
    c.character_id = 2;
    c.issued_at = 1'800'000'000;
    c.expires_at = std::numeric_limits<std::uint64_t>::max();  // never, for the fuzzer
    c.name = "Alice";
    c.world = zone::fuzz::kSeedTicketWorld;
    std::vector<std::uint8_t> ticket;
    zone::auth::issue_ticket(c, zone::fuzz::kSeedTicketKey, ticket);
    write(dir, "hello-ticket", on_channel(kReliableChannel, hello_with_ticket("x", ticket)));
    c.world = "elsewhere";
    zone::auth::issue_ticket(c, zone::fuzz::kSeedTicketKey, ticket);
    write(dir, "hello-ticket-other-world",
          on_channel(kReliableChannel, hello_with_ticket("x", ticket)));
    write(dir, "hello-ticket-garbage",
          on_channel(kReliableChannel, hello_with_ticket("bob", Bytes(120, 0x01))));
  }
  write(
      dir, "hello-utf8",
      on_channel(kReliableChannel, hello(kProtocolVersion, "Zo\xC3\xAB \xE6\x97\xA5\xE6\x9C\xAC")));
  write(dir, "hello-bidi",
        on_channel(kReliableChannel, hello(kProtocolVersion, "admin\xE2\x80\xAEgnp")));
  write(dir, "hello-long-old", on_channel(kReliableChannel, hello(2, std::string(40, 'x'))));
  write(dir, "hello-max-name",
        on_channel(kReliableChannel, hello(kProtocolVersion, std::string(255, 'n'))));
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateClientPacket(fbb, ClientMessage::Hello, CreateHello(fbb, 3).Union()));
    const auto b = bytes_of(fbb);
    write(dir, "hello-no-name", on_channel(kReliableChannel, b));
  }
  {
    // A verifiable packet whose union names a message type this protocol does not have.
    flatbuffers::FlatBufferBuilder fbb;
    const auto h = CreateHello(fbb, 3, fbb.CreateString("bob"));
    fbb.Finish(CreateClientPacket(fbb, static_cast<ClientMessage>(9), h.Union()));
    write(dir, "unknown-message", on_channel(kReliableChannel, bytes_of(fbb)));
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateClientPacket(fbb));
    write(dir, "no-message", on_channel(kReliableChannel, bytes_of(fbb)));
  }
  for (const std::uint64_t key : {std::uint64_t{0}, std::uint64_t{0x5EC12E7}, ~std::uint64_t{0}}) {
    flatbuffers::FlatBufferBuilder fbb;
    build_join_party(fbb, key);
    write(dir, "join-party-" + std::to_string(key), on_channel(kReliableChannel, bytes_of(fbb)));
    build_join_guild(fbb, key);
    write(dir, "join-guild-" + std::to_string(key), on_channel(kReliableChannel, bytes_of(fbb)));
  }
  // Actions and chat lines (protocol 8): good ones, too many arguments, a long line.
  {
    flatbuffers::FlatBufferBuilder fbb;
    const std::int32_t args[] = {1, -2, 3, 4, 5};
    build_action(fbb, 1, 0, 42, std::span(args).first(0));
    write(dir, "action-attack", on_channel(kReliableChannel, bytes_of(fbb)));
    build_action(fbb, 2, 2, 0, std::span(args).first(1));
    write(dir, "action-emote", on_channel(kReliableChannel, bytes_of(fbb)));
    build_action(fbb, 3, 65535, 0xFFFFFFFF, args);
    write(dir, "action-too-many-args", on_channel(kReliableChannel, bytes_of(fbb)));
    build_chat(fbb, ChatChannel::kSay, "hello there");
    write(dir, "chat-say", on_channel(kReliableChannel, bytes_of(fbb)));
    build_chat(fbb, ChatChannel::kWhisper, "psst", "bob");
    write(dir, "chat-whisper", on_channel(kReliableChannel, bytes_of(fbb)));
    build_chat(fbb, static_cast<ChatChannel>(200), std::string(300, 'x'));
    write(dir, "chat-bad", on_channel(kReliableChannel, bytes_of(fbb)));
  }
  write(dir, "input-zero", on_channel(kUnreliableChannel, input(1, 0, 0.0f, 0.0f)));
  write(dir, "input", on_channel(kUnreliableChannel, input(77, 76, 0.6f, -0.8f)));
  write(dir, "input-negative-zero", on_channel(kUnreliableChannel, input(2, 1, -0.0f, -0.0f)));
  write(dir, "input-extreme",
        on_channel(kUnreliableChannel, input(std::numeric_limits<std::uint32_t>::max(),
                                             std::numeric_limits<std::uint32_t>::max(),
                                             std::numeric_limits<float>::quiet_NaN(),
                                             -std::numeric_limits<float>::infinity())));
  Bytes short_input = input(5, 4, 1.0f, 0.0f);
  short_input.pop_back();
  write(dir, "input-short", on_channel(kUnreliableChannel, short_input));
  write(dir, "input-on-channel-0", on_channel(kReliableChannel, input(3, 2, 0.0f, 1.0f)));
  write(dir, "hello-on-channel-1", on_channel(kUnreliableChannel, hello(kProtocolVersion, "eve")));
  write(dir, "hello-on-channel-2", on_channel(2, hello(kProtocolVersion, "eve")));
  write(dir, "oversize", on_channel(kUnreliableChannel, Bytes(513, 0x41)));
}

// ---- snapshot_part ----------------------------------------------------------------------

constexpr std::uint8_t kSeparator[] = {0xF5, 'P', 'R', 'T'};

using zone::fuzz::kHealthRow;
using zone::fuzz::kMaxHealthRow;
using zone::fuzz::kNpcType;
using zone::fuzz::kPlayerType;
using zone::fuzz::seed_schema;

using FieldValues = std::vector<std::int32_t>;

FieldValues v(std::int32_t x, std::int32_t y, std::int32_t heading = 0, std::int32_t moving = 0,
              std::int32_t health = 100, std::int32_t party = 0, std::int32_t guild = 0) {
  FieldValues out(seed_schema().size(), 0);
  out[kX] = x;
  out[kY] = y;
  out[kHeading] = heading;
  out[kMoveState] = moving;
  out[kParty] = party;
  out[kGuild] = guild;
  out[kHealthRow] = health;
  out[kMaxHealthRow] = 100;
  return out;
}

struct Spawn {
  std::uint32_t id;
  FieldValues values;
  std::string name;
  std::uint16_t type = kNpcType;
  std::int32_t max_health = 100;  // written as the max_health row of its values
};
struct Change {
  std::uint32_t index;
  FieldValues base;
  FieldValues now;
  bool despawn = false;
};
struct Part {
  std::uint32_t tick = 1;
  std::uint32_t baseline = 0;  // a tick, 0: none
  std::uint8_t part = 0;
  std::uint8_t part_count = 1;
  bool has_self = false;
  FieldValues self_base = FieldValues(seed_schema().size(), 0);
  FieldValues self_now = FieldValues(seed_schema().size(), 0);
  std::vector<Change> changes;
  std::vector<Spawn> spawns;
};

Bytes encode(const Part& p) {
  Bytes buf(4096);
  SnapshotPartWriter w(buf, seed_schema());
  SnapshotHeader h;
  h.server_tick = p.tick;
  h.last_input_sequence = p.tick > 1 ? p.tick - 1 : 0;
  h.baseline_age = static_cast<std::uint8_t>(p.baseline ? p.tick - p.baseline : 0);
  h.part = p.part;
  h.part_count = p.part_count;
  h.flags = p.has_self ? kSnapshotHasSelf : 0;
  w.header(h);
  if (p.has_self) w.self(fields::change_mask(p.self_base, p.self_now), p.self_base, p.self_now);
  w.begin_changes(static_cast<std::uint32_t>(p.changes.size()));
  for (const Change& c : p.changes) {
    if (c.despawn) {
      w.despawn(c.index);
    } else {
      w.change(c.index, fields::change_mask(c.base, c.now), c.base, c.now);
    }
  }
  w.begin_spawns(static_cast<std::uint32_t>(p.spawns.size()));
  for (const Spawn& s : p.spawns) {
    FieldValues values = s.values;
    values[kMaxHealthRow] = s.max_health;
    w.spawn(s.id, s.type, s.name, values);
  }
  if (w.overflow()) {
    std::fprintf(stderr, "fuzz_make_seeds: a seed part does not fit\n");
    std::exit(1);
  }
  return {w.bytes().begin(), w.bytes().end()};
}

// Byte 0: the client's own id; then the parts, separated.
Bytes sequence(std::uint8_t self_id, const std::vector<Bytes>& parts) {
  Bytes out{self_id};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.insert(out.end(), std::begin(kSeparator), std::end(kSeparator));
    out.insert(out.end(), parts[i].begin(), parts[i].end());
  }
  return out;
}

// Tick 1, no baseline: the client (id 1) and three entities.
const FieldValues kSelf1 = v(5000, 5000, 0, 0, 100);
const FieldValues kTen = v(1000, 2000, 100, 1, 90, 3, 12);
const FieldValues kEleven = v(-500, 0, 65535, 0, 80);
const FieldValues kTwelve = v(0, 300, 300, 0, 0);

Part full_frame() {
  Part p;
  p.has_self = true;
  p.self_now = kSelf1;
  p.spawns = {{10, kTen, "ten"},
              {11, kEleven, "eleven", kPlayerType, 120},
              {12, kTwelve, "tw\xC3\xA9lve", kNpcType, 65535}};
  return p;
}

void snapshot_part_seeds(const std::filesystem::path& dir) {
  write(dir, "full-frame", sequence(1, {encode(full_frame())}));
  {
    Part empty;
    write(dir, "empty-frame", sequence(0, {encode(empty)}));
  }
  {
    // Tick 2 on 1: 10 moves, 11 turns through heading 0 and leaves, 12 heals, 20 spawns.
    // Tick 3 on 2: the client moves. Tick 4 on 2 (3 not acknowledged yet): 20 moves.
    Part t2;
    t2.tick = 2;
    t2.baseline = 1;
    t2.changes = {{0, kTen, v(1040, 1980, 120, 1, 90)},
                  {1, {}, {}, true},
                  {2, kTwelve, v(0, 300, 300, 0, 55)}};
    t2.spawns = {{20, v(700, -700, 16384, 1, 50), "bob", kPlayerType, 100}};
    Part t3;
    t3.tick = 3;
    t3.baseline = 2;
    t3.has_self = true;
    t3.self_base = kSelf1;
    t3.self_now = v(5030, 5000, 65000, 1, 100);
    Part t4;
    t4.tick = 4;
    t4.baseline = 2;
    t4.changes = {{2, v(700, -700, 16384, 1, 50), v(760, -700, 16384, 1, 50)}};
    write(dir, "baselines",
          sequence(1, {encode(full_frame()), encode(t2), encode(t3), encode(t4)}));
  }
  {
    // Tick 1 in three parts and tick 2 on it in two, each arriving out of order, with a
    // duplicate part.
    Part a = full_frame();
    a.part_count = 3;
    a.spawns.resize(1);
    Part b;
    b.part = 1;
    b.part_count = 3;
    b.spawns = {full_frame().spawns[1]};
    Part c;
    c.part = 2;
    c.part_count = 3;
    c.spawns = {full_frame().spawns[2], {40, v(1, 1), "far"}};
    Part d;
    d.tick = 2;
    d.baseline = 1;
    d.part_count = 2;
    d.changes = {{0, kTen, v(1010, 2000, 100, 1, 90)}};
    Part e = d;
    e.part = 1;
    e.changes = {{3, {}, {}, true}};
    e.spawns = {{41, v(2, 2), "near"}};
    write(dir, "multi-part",
          sequence(1, {encode(c), encode(a), encode(a), encode(b), encode(e), encode(d)}));
  }
  {
    // 70 frames, each on the one before, then one on a baseline the history no longer holds
    // and one on the oldest it does.
    std::vector<Bytes> parts{encode(full_frame())};
    FieldValues x = kTen;
    for (std::uint32_t t = 2; t <= 70; ++t) {
      Part p;
      p.tick = t;
      p.baseline = t - 1;
      FieldValues now = x;
      now[kX] += 30;
      p.changes = {{0, x, now}};
      x = now;
      parts.push_back(encode(p));
    }
    Part gone;
    gone.tick = 71;
    gone.baseline = 6;
    parts.push_back(encode(gone));
    Part oldest;
    oldest.tick = 72;
    oldest.baseline = 9;
    parts.push_back(encode(oldest));
    write(dir, "history", sequence(1, parts));
  }
  {
    // Every violation the replica counts, one frame each.
    Part beyond;  // changes and despawns beyond the baseline
    beyond.tick = 2;
    beyond.baseline = 1;
    beyond.changes = {{2, kTwelve, v(0, 301)}, {3, {}, {}, true}, {9, kTen, v(1, 1)}};
    Part dup;  // a spawn of an entity the baseline holds, and the client's own id
    dup.tick = 3;
    dup.baseline = 2;
    dup.spawns = {{1, v(1, 1), "me"}, {10, kTen, "ten again"}};
    Part jump;  // 10 moves 100 m in a tick
    jump.tick = 4;
    jump.baseline = 3;
    jump.changes = {{0, kTen, v(11000, 2000, 100, 1, 90)}};
    Part unknown;  // on baselines never completed
    unknown.tick = 6;
    unknown.baseline = 5;
    Part unknown2 = unknown;
    unknown2.tick = 9;
    unknown2.baseline = 7;
    Part p0;  // two parts of tick 10 that both carry the self record and change entity 10
    p0.tick = 10;
    p0.baseline = 4;
    p0.part_count = 2;
    p0.has_self = true;
    p0.self_base = kSelf1;
    p0.self_now = v(5001, 5000);
    p0.changes = {{0, kTen, v(11010, 2000)}};
    Part p1 = p0;
    p1.part = 1;
    Part p2;  // parts of tick 11 that disagree on their count
    p2.tick = 11;
    p2.baseline = 10;
    p2.part = 2;
    p2.part_count = 3;
    Part p3 = p2;
    p3.part = 0;
    p3.part_count = 2;
    write(dir, "violations",
          sequence(
              1, {encode(full_frame()), encode(beyond), encode(dup), encode(jump), encode(unknown),
                  encode(unknown2), encode(p0), encode(p1), encode(p2), encode(p3)}));
  }
  {
    // Extreme values: coordinates at the ends of int32, deltas that wrap, the largest
    // absolute values, a 255-byte name, ids up to 2^32 - 1.
    Part p;
    p.has_self = true;
    p.self_now = v(std::numeric_limits<std::int32_t>::min(),
                   std::numeric_limits<std::int32_t>::max(), 65535, 255, 65535);
    p.spawns = {{2, v(-1, -1, 1, 1, 1), std::string(255, 'z')},
                {0xFFFFFFFFu, v(std::numeric_limits<std::int32_t>::max(), 0), "last"}};
    Part q0;  // the last ticks there are
    q0.tick = 0xFFFFFFFFu - 10;
    Part q;
    q.tick = 0xFFFFFFFFu;
    q.baseline = q0.tick;
    q.has_self = true;
    q.self_now = v(std::numeric_limits<std::int32_t>::max(),
                   std::numeric_limits<std::int32_t>::min(), 0, 0, 0);
    write(dir, "extremes", sequence(7, {encode(p), encode(q0), encode(q)}));
  }
  {
    // Malformed parts among good ones: a short header, trailing bytes, an unknown type, a
    // record with a mask bit beyond the schema, a mask varint of eleven bytes, a zero tick;
    // and one
    // the parser accepts although no writer would write it (a count in two bytes).
    const Bytes good = encode(full_frame());
    Bytes short_header(good.begin(), good.begin() + 11);
    Bytes trailing = good;
    trailing.push_back(0);
    Part one;
    one.tick = 2;
    one.baseline = 1;
    one.spawns = {{30, v(1, 2), "k"}};
    Bytes bad_kind = encode(one);
    bad_kind[kSnapshotHeaderBytes + 3] = 2;  // change count, spawn count, id gap, type 2
    Bytes bad_mask = encode(one);
    // The spawn's mask is two bytes (rows 0, 1, 8, 9), then x, y, health and max_health
    // one byte each: its second byte gets bit 10, a row the schema does not have.
    bad_mask[bad_mask.size() - 5] |= 0x08;
    Bytes overlong = good;  // the self mask in eleven bytes: longer than any 64-bit varint
    overlong.insert(overlong.begin() + kSnapshotHeaderBytes, 9, std::uint8_t{0x80});
    Bytes zero_tick = encode(one);
    zero_tick[0] = zero_tick[1] = zero_tick[2] = zero_tick[3] = 0;
    Part canonical;
    canonical.tick = 3;
    canonical.baseline = 1;
    Bytes non_minimal = encode(canonical);
    non_minimal[kSnapshotHeaderBytes] = 0x80;  // a change count of 0 in two bytes
    non_minimal.insert(non_minimal.begin() + kSnapshotHeaderBytes + 1, 0x00);
    write(dir, "malformed",
          sequence(1, {short_header, trailing, good, bad_kind, bad_mask, overlong, zero_tick,
                       encode(one), non_minimal}));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR   (e.g. tests/fuzz/corpus)\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  client_packet_seeds(dir / "client_packet");
  snapshot_part_seeds(dir / "snapshot_part");
  return 0;
}
