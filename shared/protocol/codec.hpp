// Encoding and verified decoding of whole packets. Everything that reads bytes from the
// network goes through parse_*(), which runs the FlatBuffers Verifier first.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <flatbuffers/flatbuffers.h>

#include "protocol/zone_generated.h"

namespace zone::protocol {

inline constexpr std::uint16_t kProtocolVersion =
    static_cast<std::uint16_t>(ProtocolVersion::Current);

enum class ParseError : std::uint8_t {
  kNone,
  kMalformed,       // not a verifiable packet of this protocol
  kUnknownMessage,  // well-formed, but a message type this side does not know
};

// Returns the packet when the bytes are a well-formed ClientPacket holding a known
// message, nullptr otherwise (with the reason in *why, if given). The result points
// into `bytes`.
const ClientPacket* parse_client_packet(std::span<const std::uint8_t> bytes,
                                        ParseError* why = nullptr);
const ServerPacket* parse_server_packet(std::span<const std::uint8_t> bytes,
                                        ParseError* why = nullptr);

// Builders: each clears `fbb`, writes one packet and finishes it.
void build_hello(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t protocol_version,
                 std::string_view player_name);
void build_input(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t sequence, float move_x,
                 float move_y, std::uint32_t ack_tick);

inline std::span<const std::uint8_t> bytes_of(const flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

const char* to_string(DisconnectReason reason);

}  // namespace zone::protocol
