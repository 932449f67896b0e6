// Encoding and verified decoding of the reliable (channel 0) FlatBuffers messages.
// Everything that reads bytes from the network goes through parse_*(), which runs the
// FlatBuffers Verifier first. The channel-1 messages are in compact.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <flatbuffers/flatbuffers.h>

#include "protocol/compact.hpp"
#include "protocol/schema.hpp"
#include "protocol/zone_generated.h"

namespace zone::protocol {

inline constexpr std::uint16_t kProtocolVersion =
    static_cast<std::uint16_t>(ProtocolVersion::Current);

// ENet channels: reliable FlatBuffers messages, and the unreliable compact ones.
inline constexpr std::uint8_t kReliableChannel = 0;
inline constexpr std::uint8_t kUnreliableChannel = 1;
inline constexpr std::size_t kChannelCount = 2;

// Returns the packet when the bytes are a well-formed ClientPacket holding a known
// message, nullptr otherwise (with the reason in *why, if given). The result points
// into `bytes`.
const ClientPacket* parse_client_packet(std::span<const std::uint8_t> bytes,
                                        ParseError* why = nullptr);
const ServerPacket* parse_server_packet(std::span<const std::uint8_t> bytes,
                                        ParseError* why = nullptr);

// Builders: each clears `fbb`, writes one packet and finishes it.
// A transfer token (after a Transfer message) makes it the hello of a player another
// zone handed over; empty: a new player. A ticket (empty: none) is the login ticket a
// zone in ticket mode requires. A resume token (empty: none) is the last Welcome's, after
// a lost connection.
void build_hello(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t protocol_version,
                 std::string_view player_name, std::span<const std::uint8_t> transfer_token = {},
                 std::span<const std::uint8_t> ticket = {},
                 std::span<const std::uint8_t> resume_token = {});

void build_join_party(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key);
void build_join_guild(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key);

// An action (docs/protocol.md, "Actions") and a chat line ("Chat").
void build_action(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t sequence, std::uint16_t action,
                  std::uint32_t target, std::span<const std::int32_t> args = {});
void build_chat(flatbuffers::FlatBufferBuilder& fbb, ChatChannel channel, std::string_view text,
                std::string_view to = {});

void build_action_result(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t sequence,
                         ActionStatus status, std::uint32_t server_tick);
void build_chat_result(flatbuffers::FlatBufferBuilder& fbb, ChatStatus status,
                       std::uint8_t channel);

// One event as an Events message carries it.
struct EventView {
  std::uint32_t sequence = 0;
  std::uint16_t kind = 0;
  std::uint32_t entity = 0;
  std::uint32_t target = 0;
  std::span<const std::int32_t> args;
  std::string_view text;
  std::string_view name;
};
// At most this many events in one Events message (a tick with more for one client is
// sent as several, in order).
inline constexpr std::size_t kMaxEventsPerMessage = 64;
void build_events(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t server_tick,
                  std::span<const EventView> events);

// The schema as the Welcome carries it.
flatbuffers::Offset<SchemaDef> build_schema(flatbuffers::FlatBufferBuilder& fbb,
                                            const Schema& schema);
// A client's reading of a Welcome's schema: nullopt (with the reason in *why) unless it
// starts with the engine's eight rows as they are, and every field and type is
// well-formed (names, widths, counts: docs/protocol.md, "The schema").
std::optional<Schema> read_schema(const SchemaDef* def, std::string* why = nullptr);

inline std::span<const std::uint8_t> bytes_of(const flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

const char* to_string(DisconnectReason reason);

}  // namespace zone::protocol
