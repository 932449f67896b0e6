// The kit's small pieces: the event queue (order, growth, reuse) and the chunk set's
// update (shared with client-sim's bots).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/chunk_set.hpp"
#include "client/event_queue.hpp"
#include "protocol/codec.hpp"

using zone::client::ClientEvent;
using zone::client::EventQueue;
using zone::client::EventType;

TEST_CASE(
    "event queue: events come out oldest first, the ring grows when the game does not poll, and "
    "slots start clean") {
  EventQueue q;
  for (std::uint32_t i = 0; i < 200; ++i) {
    ClientEvent& e = q.push();
    e.type = EventType::kGame;
    e.sequence = i;
    e.text = "line " + std::to_string(i);
    e.members.assign(i % 3, i);
  }
  CHECK(q.size() == 200);
  for (std::uint32_t i = 0; i < 200; ++i) {
    const ClientEvent* e = q.pop();
    REQUIRE(e != nullptr);
    CHECK(e->sequence == i);
    CHECK(e->text == "line " + std::to_string(i));
    CHECK(e->members.size() == i % 3);
  }
  CHECK(q.pop() == nullptr);
  // A reused slot carries nothing of its last event.
  ClientEvent& again = q.push();
  CHECK(again.type == EventType::kNone);
  CHECK(again.text.empty());
  CHECK(again.members.empty());
  CHECK(again.sequence == 0);
}

TEST_CASE(
    "chunk set: unloads go first, then loads, the set stays sorted, and impossible changes are "
    "reported") {
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<zone::protocol::Chunk> load = {{1, 1}, {0, 2}, {3, 0}};
  const std::vector<zone::protocol::Chunk> unload = {{5, 5}};
  const auto u =
      zone::protocol::CreateChunkUpdateDirect(fbb, 10, 512.0f, 768.0f, 896.0f, &load, &unload);
  fbb.Finish(zone::protocol::CreateServerPacket(fbb, zone::protocol::ServerMessage::ChunkUpdate,
                                                u.Union()));
  const auto* packet = zone::protocol::parse_server_packet(zone::protocol::bytes_of(fbb));
  REQUIRE(packet != nullptr);
  const zone::protocol::ChunkUpdate* update = packet->message_as_ChunkUpdate();
  REQUIRE(update != nullptr);

  std::vector<zone::util::ChunkCoord> loaded = {{5, 5}, {1, 1}};  // (1, 1) already held
  std::sort(loaded.begin(), loaded.end());
  std::vector<std::pair<bool, zone::util::ChunkCoord>> mismatches;
  const zone::client::ChunkChange change = zone::client::apply_chunk_update(
      loaded, *update,
      [&](bool is_load, zone::util::ChunkCoord c) { mismatches.emplace_back(is_load, c); });
  CHECK(change.loads == 3);
  CHECK(change.unloads == 1);
  const std::vector<zone::util::ChunkCoord> expected = {{0, 2}, {1, 1}, {3, 0}};
  CHECK(loaded == expected);
  REQUIRE(mismatches.size() == 1);
  CHECK(mismatches[0].first);  // a load of a chunk held
  CHECK(mismatches[0].second == zone::util::ChunkCoord{1, 1});
  // Unloading what is not held is the other mismatch.
  mismatches.clear();
  loaded.clear();
  zone::client::apply_chunk_update(loaded, *update, [&](bool is_load, zone::util::ChunkCoord c) {
    mismatches.emplace_back(is_load, c);
  });
  REQUIRE(mismatches.size() == 1);
  CHECK_FALSE(mismatches[0].first);
  CHECK(mismatches[0].second == zone::util::ChunkCoord{5, 5});
}
