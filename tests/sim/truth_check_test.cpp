// client-sim's truth check, fed the way it is in a run but without a network: a zone
// loop (Loopback: World + Replicator, replicas fed the exact bytes), the server's
// TruthRecorder and its JSON, client-sim's parser, window and checker. A replica the
// replicator built passes; truth that disagrees with it in any of the ways the check
// looks for is reported.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <flatbuffers/flatbuffers.h>

#include "client/bot.hpp"
#include "loopback.hpp"  // tests/replication
#include "protocol/codec.hpp"
#include "sim/scenario.hpp"
#include "sim/truth_check.hpp"
#include "zone/truth_recorder.hpp"

using namespace zone;
using test::Loopback;
using test::LoopClient;

namespace {

// A crowd at a small budget, with distance tiers: records wait for budget and for their
// tier, so the window's older ticks are needed.
Loopback crowded_zone(const world::PrecisionParams& precision = {}) {
  world::WorldParams wp = test::small_world(150, world::NpcBehaviour::kWander);
  wp.precision = precision;
  wp.grid.bounds = {{0.0, 0.0}, {60.0, 60.0}};
  wp.grid.cell_size = 10.0;
  wp.npcs.idle_fraction = 0.0;
  replication::ReplicationParams rp = test::rparams(6000);
  rp.interest.tiers = true;
  return Loopback(wp, rp);
}

// The window client-sim would fetch at `top`: the checkable ticks with the per-player
// lists, the ones before them positions only.
sim::TruthWindow window_at(const TruthRecorder& recorder, std::uint32_t top,
                           std::uint32_t checkable) {
  sim::TruthWindow window;
  sim::Truth newest;
  std::string error;
  REQUIRE(sim::parse_truth(*recorder.json_for(top), newest, error));
  const std::uint32_t depth = newest.max_staleness_ticks + checkable;
  for (std::uint32_t t = top >= depth ? top - depth + 1 : 1; t <= top; ++t) {
    const bool full = t + checkable > top;
    const auto json = recorder.json_for(t, full ? TruthDetail::kFull : TruthDetail::kPositions);
    REQUIRE(json.has_value());
    sim::Truth truth;
    REQUIRE_MESSAGE(sim::parse_truth(*json, truth, error), error);
    CHECK(truth.per_player == full);
    window.by_tick.emplace(t, std::move(truth));
  }
  return window;
}

// Every client's newest frame among the window's newest 16 ticks, taken and checked as
// client-sim does.
sim::TruthReport check_all(const Loopback& lb, const sim::TruthWindow& window) {
  sim::TruthReport report;
  const std::uint32_t top = lb.tick;
  for (const LoopClient& c : lb.clients) {
    const sim::TakenFrame taken = sim::take_frame(c.replica, c.entity, "client", top - 15, top);
    sim::check_frame(taken, window, report, 1000);
  }
  return report;
}

bool mentions(const sim::TruthReport& report, const std::string& text) {
  for (const std::string& d : report.details) {
    if (d.find(text) != std::string::npos) return true;
  }
  return false;
}

struct Run {
  Loopback lb;
  TruthRecorder recorder{64};
  explicit Run(int ticks, const world::PrecisionParams& precision = {})
      : lb(crowded_zone(precision)) {
    for (int i = 0; i < 4; ++i) lb.connect("watcher-" + std::to_string(i));
    for (int t = 0; t < ticks; ++t) {
      lb.step();
      recorder.record(lb.tick, lb.world, lb.rep);
    }
  }
};

}  // namespace

TEST_CASE("truth check: replicas the replicator built match their truth, held records included") {
  Run run(120);
  const sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
  const sim::TruthReport report = check_all(run.lb, window);
  CHECK(report.checks == run.lb.clients.size());
  CHECK(report.skipped == 0);
  INFO("first mismatches: ", fmt::format("{}", fmt::join(report.details, "\n")));
  CHECK(report.mismatches == 0);
  CHECK(report.entity_checks > 100);
  // The budget and the tiers did hold records back, and the check accepted them because
  // each was exactly where its entity had been a few ticks before.
  CHECK(report.stale_entities > 0);
  CHECK(report.tier_stale_entities > 0);
  CHECK(report.max_staleness_ticks > 0);
}

TEST_CASE("truth check: an entity away from where the replica holds it is a mismatch") {
  Run run(120);
  sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
  const replica::Frame& frame = run.lb.clients.front().replica.current();
  REQUIRE(!frame.entities.empty());
  const std::uint32_t moved = frame.entities.front().id;
  for (auto& [tick, truth] : window.by_tick) {
    for (sim::TruthEntity& e : truth.entities) {
      if (e.id == moved) e.x += 0.5;  // half a metre, in every tick of the window
    }
  }
  const sim::TruthReport report = check_all(run.lb, window);
  CHECK(report.mismatches > 0);
  CHECK(mentions(report, "entity " + std::to_string(moved) + " at"));
}

TEST_CASE("truth check: a replica holding what the world does not have is a mismatch") {
  Run run(120);
  sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
  const replica::Frame& frame = run.lb.clients.front().replica.current();
  REQUIRE(!frame.entities.empty());
  const std::uint32_t gone = frame.entities.back().id;
  for (auto& [tick, truth] : window.by_tick)
    std::erase_if(truth.entities, [&](const auto& e) { return e.id == gone; });
  const sim::TruthReport report = check_all(run.lb, window);
  CHECK(mentions(report,
                 "entity " + std::to_string(gone) + " is in the replica but not in the world"));
}

TEST_CASE("truth check: entities beyond the radius in the replica, or missing within it") {
  Run run(120);
  SUBCASE("a view radius the replica exceeds") {
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    for (auto& [tick, truth] : window.by_tick) {
      truth.view_radius = 3.0;
      truth.hysteresis = 0.5;
    }
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, "beyond radius + hysteresis"));
  }
  SUBCASE("an entity the world has in view that the replica lacks") {
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    // A new entity next to every client, in every tick: no client can have it.
    for (auto& [tick, truth] : window.by_tick) {
      const LoopClient& c = run.lb.clients.front();
      const sim::TruthEntity* self = truth.find(c.entity);
      REQUIRE(self != nullptr);
      truth.entities.push_back({4'000'000'000u, self->x + 1.0, self->y, 0, 0, 1, {}});
    }
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, "entity 4000000000 at"));
    CHECK(mentions(report, "missing from the replica"));
  }
}

TEST_CASE("truth check: a bot is checked only on a tick whose held-back history is all there") {
  Run run(120);
  sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
  // Without the older ticks, no tick of the window has its whole deferral history: every
  // client is skipped, not compared against positions the check cannot see.
  const std::uint32_t keep_from = run.lb.tick - 4;
  std::erase_if(window.by_tick, [&](const auto& entry) { return entry.first < keep_from; });
  const sim::TruthReport report = check_all(run.lb, window);
  CHECK(report.checks == 0);
  CHECK(report.skipped == run.lb.clients.size());
  CHECK(report.mismatches == 0);
}

TEST_CASE("truth check: a frame taken aside is checked after its replica has let it go") {
  Run run(120);
  const std::uint32_t top = run.lb.tick;
  std::vector<sim::TakenFrame> taken;
  for (const LoopClient& c : run.lb.clients) {
    taken.push_back(sim::take_frame(c.replica, c.entity, "client", top - 15, top));
    REQUIRE(taken.back().frame.tick != 0);
  }
  const sim::TruthWindow window = window_at(run.recorder, top, 16);
  // The clients play on past their frame history: the ticks taken are gone from them.
  for (std::uint32_t t = 0; t < replica::FrameReplica::kFrameHistory + 8; ++t) run.lb.step();
  for (std::size_t i = 0; i < taken.size(); ++i) {
    CHECK(run.lb.clients[i].replica.frame_at(taken[i].frame.tick) == nullptr);
  }
  sim::TruthReport report;
  for (const sim::TakenFrame& frame : taken) sim::check_frame(frame, window, report, 1000);
  CHECK(report.checks == taken.size());
  INFO("first mismatches: ", fmt::format("{}", fmt::join(report.details, "\n")));
  CHECK(report.mismatches == 0);
  CHECK(report.stale_entities > 0);
}

TEST_CASE("truth check: per-player lists asked for some players check those players only") {
  Run run(120);
  const std::uint32_t top = run.lb.tick;
  sim::TruthWindow window = window_at(run.recorder, top, 16);
  // The checked tick again, with the lists of the first client only.
  const std::vector<std::uint32_t> first = {run.lb.clients.front().entity};
  const auto json = run.recorder.json_for(top, TruthDetail::kFull, &first);
  REQUIRE(json.has_value());
  sim::Truth truth;
  std::string error;
  REQUIRE_MESSAGE(sim::parse_truth(*json, truth, error), error);
  CHECK_FALSE(truth.all_players);
  CHECK(truth.players == first);
  for (const auto& [player, list] : truth.tier_slack) CHECK(player == first.front());
  CHECK(truth.lists_player(first.front()));
  CHECK_FALSE(truth.lists_player(run.lb.clients.back().entity));
  window.by_tick.insert_or_assign(top, std::move(truth));
  sim::TruthReport report;
  for (const LoopClient& c : run.lb.clients) {
    // Each client's frame at the top tick: only the listed one can be checked on it.
    const sim::TakenFrame taken = sim::take_frame(c.replica, c.entity, "client", top, top);
    REQUIRE(taken.frame.tick == top);
    sim::check_frame(taken, window, report, 1000);
  }
  CHECK(report.checks == 1);
  CHECK(report.skipped == run.lb.clients.size() - 1);
  CHECK(report.mismatches == 0);
}

namespace {

// Two parties of two spread over a 400 m world with a 30 m view: members are mostly far
// beyond the radius, and held all the same.
struct PartyRun {
  Loopback lb{[] {
                world::WorldParams wp = test::small_world(40, world::NpcBehaviour::kWander);
                wp.grid.bounds = {{0.0, 0.0}, {400.0, 400.0}};
                wp.parties.enabled = true;
                wp.parties.max_size = 2;
                return wp;
              }(),
              test::rparams(64000)};
  TruthRecorder recorder{64};
  explicit PartyRun(int ticks) {
    for (int i = 0; i < 4; ++i) {
      const LoopClient& c = lb.connect("member-" + std::to_string(i));
      lb.world.join_party(c.slot, 100 + i / 2);
    }
    for (int t = 0; t < ticks; ++t) {
      lb.step();
      recorder.record(lb.tick, lb.world, lb.rep);
    }
  }
  // The other member of client k's party, and how far it is.
  const LoopClient& partner(std::size_t k) const { return lb.clients[k ^ 1]; }
};

}  // namespace

TEST_CASE("truth check: party members far beyond the radius are required and accepted") {
  PartyRun run(60);
  const sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
  const sim::Truth& top = window.by_tick.rbegin()->second;
  CHECK(top.party_full_range);
  // The members really are far apart.
  const sim::TruthEntity* a = top.find(run.lb.clients[0].entity);
  const sim::TruthEntity* b = top.find(run.partner(0).entity);
  REQUIRE((a != nullptr && b != nullptr));
  CHECK(a->party != 0);
  CHECK(a->party == b->party);
  CHECK(std::hypot(a->x - b->x, a->y - b->y) > 40.0);
  const sim::TruthReport report = check_all(run.lb, window);
  INFO("first mismatches: ", fmt::format("{}", fmt::join(report.details, "\n")));
  CHECK(report.checks == 4);
  CHECK(report.mismatches == 0);
  CHECK(report.party_checks == 4);
}

TEST_CASE("truth check: a party member missing, a far stranger held, a wrong party field") {
  PartyRun run(60);
  SUBCASE("without full range, the far partner is beyond radius + hysteresis") {
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    for (auto& [tick, truth] : window.by_tick) truth.party_full_range = false;
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, "beyond radius + hysteresis"));
  }
  SUBCASE("a far entity of the client's party that the replica lacks") {
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    const LoopClient& c = run.lb.clients.front();
    for (auto& [tick, truth] : window.by_tick) {
      const sim::TruthEntity* self = truth.find(c.entity);
      REQUIRE(self != nullptr);
      truth.entities.push_back({4'000'000'000u, self->x + 300.0, self->y, self->party, 0, 1, {}});
    }
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, "entity 4000000000 at"));
    CHECK(mentions(report, "missing from the replica"));
  }
  SUBCASE("a party the replica does not hold for its members") {
    // The pair's party renamed in the truth: both stay members of one party (the partner
    // is still required), but the party field the replica holds is now wrong.
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    const world::EntityId self = run.lb.clients.front().entity;
    const world::EntityId partner = run.partner(0).entity;
    for (auto& [tick, truth] : window.by_tick) {
      for (sim::TruthEntity& e : truth.entities) {
        if (e.id == partner || e.id == self) e.party += 1000;
      }
    }
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, fmt::format("entity {} at (", partner)));
    CHECK(mentions(report, "own position"));
    CHECK_FALSE(mentions(report, "beyond radius + hysteresis"));
  }
}

TEST_CASE(
    "truth check: precision tiers - each entity exact in its units, a wrong unit is a mismatch") {
  // Ambient NPCs at 10 cm and 1/256 turn; players, and NPCs within 5 m of one, at 1 cm.
  const world::PrecisionParams precision{{1, 0}, {10, 8}, 5.0};
  Run run(120, precision);
  SUBCASE("as built") {
    const sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    const sim::TruthReport report = check_all(run.lb, window);
    INFO("first mismatches: ", fmt::format("{}", fmt::join(report.details, "\n")));
    CHECK(report.mismatches == 0);
    CHECK(report.coarse_checks > 100);
    CHECK(report.coarse_checks < report.entity_checks);  // players and engaged NPCs at 1 cm
  }
  SUBCASE("the truth says another unit than the replica holds") {
    sim::TruthWindow window = window_at(run.recorder, run.lb.tick, 16);
    const replica::Frame& frame = run.lb.clients.front().replica.current();
    std::uint32_t coarse = 0;
    for (const replica::EntityState& e : frame.entities) {
      if (protocol::position_unit_cm(e.values) == 10) coarse = e.id;
    }
    REQUIRE(coarse != 0);
    // The same position, claimed at a centimetre: the replica's 10 cm units are wrong.
    for (auto& [tick, truth] : window.by_tick) {
      for (sim::TruthEntity& e : truth.entities) {
        if (e.id == coarse) e.position_cm = 1;
      }
    }
    const sim::TruthReport report = check_all(run.lb, window);
    CHECK(mentions(report, fmt::format("entity {} at (", coarse)));
    CHECK(mentions(report, "m in 10 cm units"));
  }
}

// The event truth check, from crafted inputs: a tick's events as the server lists them
// (sequence, kind, entity, target, recipients) against what each bot received of that
// tick.
namespace {

sim::TickEvents crafted_tick() {
  sim::TickEvents t;
  t.tick = 10;
  t.events = {{5, 0, 7, 0, {1, 2, 3}},  // a chat line said by entity 7
              {6, 1, 8, 7, {2}},        // a hit on entity 8 by 7, sent to player 2 only
              {7, 2, 9, 0, {}}};        // a death nobody held
  return t;
}

client::ReceivedEvent got(std::uint32_t tick, std::uint32_t sequence, std::uint16_t kind,
                          std::uint32_t entity, std::uint32_t target) {
  return {tick, sequence, kind, entity, target};
}

sim::EventReport compare(std::uint32_t bot, const std::vector<client::ReceivedEvent>& received) {
  sim::EventReport report;
  sim::check_events(bot, "bot", crafted_tick(), received, report, 100);
  return report;
}

}  // namespace

TEST_CASE("event truth check: what the truth lists, received once each, passes") {
  const sim::EventReport r = compare(2, {got(10, 5, 0, 7, 0), got(10, 6, 1, 8, 7)});
  CHECK(r.checks == 2);
  CHECK(r.errors() == 0);
  // Events of other ticks are not this tick's business.
  const sim::EventReport other = compare(1, {got(9, 4, 0, 7, 0), got(10, 5, 0, 7, 0)});
  CHECK(other.checks == 1);
  CHECK(other.errors() == 0);
  // A bot the truth lists for nothing, having received nothing: nothing to check.
  const sim::EventReport none = compare(4, {});
  CHECK(none.checks == 0);
  CHECK(none.errors() == 0);
}

TEST_CASE("event truth check: a listed event not received is missing") {
  const sim::EventReport r = compare(2, {got(10, 6, 1, 8, 7)});
  CHECK(r.checks == 2);
  CHECK(r.missing == 1);
  CHECK(r.extra == 0);
  CHECK(r.duplicate == 0);
  REQUIRE(r.details.size() == 1);
  CHECK(r.details[0].find("event 5 (kind 0, entity 7, target 0) not received") !=
        std::string::npos);
}

TEST_CASE("event truth check: an event received twice is a duplicate") {
  const sim::EventReport r = compare(3, {got(10, 5, 0, 7, 0), got(10, 5, 0, 7, 0)});
  CHECK(r.checks == 1);
  CHECK(r.duplicate == 1);
  CHECK(r.missing == 0);
  CHECK(r.extra == 0);
  const sim::EventReport thrice =
      compare(3, {got(10, 5, 0, 7, 0), got(10, 5, 0, 7, 0), got(10, 5, 0, 7, 0)});
  CHECK(thrice.duplicate == 2);
  REQUIRE(!thrice.details.empty());
  CHECK(thrice.details[0].find("received 3 times") != std::string::npos);
}

TEST_CASE("event truth check: an event the truth does not list for the bot is extra") {
  SUBCASE("listed for others, not for this bot") {
    const sim::EventReport r = compare(1, {got(10, 5, 0, 7, 0), got(10, 6, 1, 8, 7)});
    CHECK(r.checks == 1);
    CHECK(r.extra == 1);
    CHECK(r.missing == 0);
    CHECK(r.details.at(0).find("does not list this bot") != std::string::npos);
  }
  SUBCASE("sent to nobody") {
    const sim::EventReport r = compare(1, {got(10, 5, 0, 7, 0), got(10, 7, 2, 9, 0)});
    CHECK(r.extra == 1);
  }
  SUBCASE("no such event at that tick") {
    const sim::EventReport r = compare(1, {got(10, 5, 0, 7, 0), got(10, 99, 0, 7, 0)});
    CHECK(r.extra == 1);
    CHECK(r.details.at(0).find("has no such event at this tick") != std::string::npos);
  }
  SUBCASE("the listed event, but about another entity: missing and extra") {
    const sim::EventReport r = compare(2, {got(10, 5, 0, 7, 0), got(10, 6, 1, 8, 3)});
    CHECK(r.checks == 2);
    CHECK(r.missing == 1);
    CHECK(r.extra == 1);
  }
}

TEST_CASE("event truth check: the server's events JSON (only=events) parses as listed") {
  // Four watchers in the crowded zone; a tick with a zone-wide line and a line said by the
  // first watcher (the players holding it, and itself).
  Run run(60);
  run.lb.rep.set_record_deliveries(true);
  const test::LoopClient& speaker = run.lb.clients.front();
  const protocol::Schema& schema = run.lb.world.game().schema;
  const std::array<std::int32_t, 1> zone_channel = {
      static_cast<std::int32_t>(protocol::ChatChannel::kZone)};
  const std::array<std::int32_t, 1> say_channel = {
      static_cast<std::int32_t>(protocol::ChatChannel::kSay)};
  world::EventDraft zone_line;
  zone_line.kind = protocol::kChatEvent;
  zone_line.route = world::EventRoute::kZone;
  zone_line.entity = speaker.entity;
  zone_line.args = zone_channel;
  zone_line.text = "to all";
  world::EventDraft said = zone_line;
  said.route = world::EventRoute::kEntity;
  said.args = say_channel;
  said.text = "aloud";
  // Emitted within the tick (the loop clears the log at its start, as the zone does).
  run.lb.before_aoi = [&] {
    REQUIRE_FALSE(run.lb.world.events().emit(schema, zone_line));
    REQUIRE_FALSE(run.lb.world.events().emit(schema, said));
  };
  run.lb.step();
  run.lb.before_aoi = nullptr;
  run.recorder.record(run.lb.tick, run.lb.world, run.lb.rep);
  const auto json = run.recorder.json_for(run.lb.tick, TruthDetail::kEvents);
  REQUIRE(json.has_value());
  CHECK(json->find("\"entities\"") == std::string::npos);  // events only
  sim::TickEvents events;
  std::string error;
  REQUIRE_MESSAGE(sim::parse_event_truth(*json, events, error), error);
  CHECK(events.tick == run.lb.tick);
  REQUIRE(events.events.size() == 2);
  std::vector<std::uint32_t> everyone;
  for (const test::LoopClient& c : run.lb.clients) everyone.push_back(c.entity);
  std::sort(everyone.begin(), everyone.end());
  CHECK(events.events[0].recipients == everyone);
  CHECK(events.events[0].entity == speaker.entity);
  CHECK(events.events[1].sequence == events.events[0].sequence + 1);
  // Said aloud: the speaker and exactly the watchers whose frames hold it.
  std::vector<std::uint32_t> holders;
  for (const test::LoopClient& c : run.lb.clients) {
    if (c.entity == speaker.entity || run.lb.rep.holds(c.id, speaker.entity)) {
      holders.push_back(c.entity);
    }
  }
  std::sort(holders.begin(), holders.end());
  CHECK(holders.size() > 1);  // the watchers share the small zone
  CHECK(events.events[1].recipients == holders);
  // What each client was sent passes the event truth check, and the check saw it all.
  for (const test::LoopClient& c : run.lb.clients) {
    std::vector<client::ReceivedEvent> received;
    for (const auto& r : c.events) {
      if (r.tick == run.lb.tick)
        received.push_back({r.tick, r.sequence, r.kind, r.entity, r.target});
    }
    CHECK(!received.empty());  // the zone-wide line at least
    sim::EventReport report;
    sim::check_events(c.entity, "client", events, received, report);
    INFO(fmt::format("{}", fmt::join(report.details, "\n")));
    CHECK(report.errors() == 0);
    CHECK(report.checks == received.size());
  }
  // A full answer lists the same events.
  sim::TickEvents full;
  REQUIRE(sim::parse_event_truth(*run.recorder.json_for(run.lb.tick), full, error));
  CHECK(full.events.size() == 2);
}

// The bot's check on receipt: an event about an entity (a game event, or a line said
// aloud) must name its own entity or one it held in a frame it completed at or before
// the event's tick. A bot shadows a loopback client: it gets the same Welcome and the
// same snapshot bytes, then crafted Events messages.
namespace {

std::vector<std::uint8_t> welcome_for(const world::World& world, std::uint32_t entity,
                                      std::uint32_t tick) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto zone = fbb.CreateString("zone");
  const auto schema = protocol::build_schema(fbb, world.game().schema);
  const auto welcome = protocol::CreateWelcome(fbb, entity, tick, 20, 30.0f, 2.0f, 0.0f, 0.0f,
                                               60.0f, 60.0f, true, 10.0f, zone, schema, 0);
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Welcome, welcome.Union()));
  const auto bytes = protocol::bytes_of(fbb);
  return {bytes.begin(), bytes.end()};
}

std::vector<std::uint8_t> events_about(std::uint32_t tick, std::uint32_t sequence,
                                       std::uint16_t kind, std::uint32_t entity,
                                       std::int32_t channel = 0) {
  flatbuffers::FlatBufferBuilder fbb;
  const std::array<std::int32_t, 1> args = {channel};
  const protocol::EventView e{sequence,
                              kind,
                              entity,
                              0,
                              kind == protocol::kChatEvent ? std::span<const std::int32_t>(args)
                                                           : std::span<const std::int32_t>(),
                              kind == protocol::kChatEvent ? "hi" : "",
                              ""};
  protocol::build_events(fbb, tick, std::span(&e, 1));
  const auto bytes = protocol::bytes_of(fbb);
  return {bytes.begin(), bytes.end()};
}

}  // namespace

TEST_CASE("bot: an event about an entity it did not hold at the event's tick is before spawn") {
  test::Loopback lb = crowded_zone();
  lb.connect("watcher");
  lb.connect("other");
  test::LoopClient& watcher = lb.clients.front();
  watcher.keep_bytes = true;  // every packet it is sent, for the bot too
  client::Bot bot("watcher");
  bot.set_keep_events(true);
  const std::vector<std::uint8_t> welcome = welcome_for(lb.world, watcher.entity, 1);
  bot.on_packet(protocol::kReliableChannel, welcome);
  REQUIRE(bot.phase() == client::Bot::Phase::kPlaying);
  // Per entity, the first tick a frame of the bot's held it; and one that left again.
  std::map<std::uint32_t, std::uint32_t> first_held;
  std::uint32_t left = 0, left_at = 0, first_frame = 0;
  std::vector<std::uint32_t> before;
  for (int t = 0; t < 80; ++t) {
    lb.step();
    for (const auto& [tick, bytes] : watcher.log)
      bot.on_packet(protocol::kUnreliableChannel, bytes);
    watcher.log.clear();
    if (first_frame == 0) first_frame = bot.replica().ack_tick();
    std::vector<std::uint32_t> now;
    for (const replica::EntityView e : bot.replica().current().entities) {
      now.push_back(e.id);
      first_held.try_emplace(e.id, bot.replica().ack_tick());
    }
    for (const std::uint32_t id : before) {
      if (left == 0 && !std::binary_search(now.begin(), now.end(), id)) {
        left = id;
        left_at = bot.replica().ack_tick();
      }
    }
    before = now;
  }
  REQUIRE(bot.replica().violations().empty());
  REQUIRE(bot.replica().ack_tick() == watcher.replica.ack_tick());  // the same frames
  // An entity that came into view after the first frame (the budget held spawns back).
  REQUIRE(first_frame != 0);
  std::uint32_t late = 0;
  for (const auto& [id, tick] : first_held) {
    if (tick > first_frame + 1) late = id;
  }
  REQUIRE(late != 0);
  const std::uint32_t since = first_held[late];
  const auto hit = static_cast<std::uint16_t>(*lb.world.game().schema.find_event("hit"));
  const auto say = static_cast<std::int32_t>(protocol::ChatChannel::kSay);
  const auto whisper = static_cast<std::int32_t>(protocol::ChatChannel::kWhisper);
  std::uint32_t sequence = 0;
  auto feed = [&](std::uint32_t tick, std::uint16_t kind, std::uint32_t entity,
                  std::int32_t channel = 0) {
    bot.on_packet(protocol::kReliableChannel,
                  events_about(tick, ++sequence, kind, entity, channel));
  };
  feed(since, hit, late);                            // held from that tick
  feed(since + 5, protocol::kChatEvent, late, say);  // and on
  feed(1, hit, watcher.entity);                      // its own: always
  CHECK(bot.game().events_before_spawn == 0);
  feed(since - 1, hit, late);  // a tick before its first frame
  CHECK(bot.game().events_before_spawn == 1);
  feed(since - 1, protocol::kChatEvent, late, say);  // said aloud: the same rule
  CHECK(bot.game().events_before_spawn == 2);
  feed(since - 1, protocol::kChatEvent, late, whisper);  // a whisper is routed directly
  feed(since, protocol::kChatEvent, 999999, whisper);
  CHECK(bot.game().events_before_spawn == 2);
  feed(since, hit, 999999);  // never held
  CHECK(bot.game().events_before_spawn == 3);
  CHECK(bot.before_spawn_details().size() == 3);
  CHECK(bot.before_spawn_details().back().find("never held") != std::string::npos);
  // One that left the view was held: an event of a tick it was held at is fine, late.
  if (left != 0) {
    feed(left_at - 1, hit, left);
    CHECK(bot.game().events_before_spawn == 3);
  }
  // Every event is logged for the truth check, in order, with its tick; a later tick's
  // Events message settles the earlier ticks.
  CHECK(bot.event_log().size() == sequence);
  CHECK(bot.events_settled_before() >= since + 5);
  CHECK(bot.game().events_received == sequence);
}

// The scenarios that play (configs/scenarios/chat.yaml and combat.yaml) load as written,
// and their keys are checked like every other's.
TEST_CASE(
    "scenarios: chat and combat load, and a wrong chat or combat key is an error with its line") {
  const std::string dir = ZONE_SOURCE_DIR "/configs/scenarios";
  const sim::ScenarioLoad chat = sim::load_scenario("chat", dir);
  INFO(fmt::format("{}", fmt::join(chat.errors, "\n")));
  REQUIRE(chat.ok());
  CHECK(chat.scenario.chat.total() > 0.0);
  CHECK(chat.scenario.chat.total() <= chat.scenario.chat.max_per_second);
  for (const double rate : chat.scenario.chat.per_second) CHECK(rate > 0.0);
  CHECK(chat.scenario.party_size == 4);
  CHECK_FALSE(chat.scenario.combat.enabled);
  const sim::ScenarioLoad combat = sim::load_scenario("combat", dir);
  REQUIRE(combat.ok());
  CHECK(combat.scenario.movement == sim::Movement::kHunt);
  CHECK(combat.scenario.combat.enabled);
  CHECK(combat.scenario.combat.melee_range == 3.0);
  CHECK(combat.scenario.combat.ranged_range == 25.0);
  CHECK(combat.scenario.combat.targets == sim::CombatPlan::Targets::kAny);

  const std::string bad =
      (std::filesystem::temp_directory_path() / "zone-bad-scenario.yaml").string();
  std::ofstream(bad) << "movement: hunt\nchat:\n  shout: 1\ncombat:\n  targets: friends\n";
  const sim::ScenarioLoad wrong = sim::load_scenario(bad, dir);
  REQUIRE(wrong.errors.size() == 2);
  CHECK(wrong.errors[0].find(":3: chat.shout: unknown key") != std::string::npos);
  CHECK(wrong.errors[1].find(":5: combat.targets: expected one of any, npcs, players") !=
        std::string::npos);
  std::filesystem::remove(bad);
}
