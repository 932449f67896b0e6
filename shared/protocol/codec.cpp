#include "protocol/codec.hpp"

namespace zone::protocol {
namespace {

// Bounds on what the verifier will walk, far above any legal packet, so a crafted
// buffer cannot make verification expensive.
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 100000;

template <typename Root>
const Root* verified_root(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < sizeof(flatbuffers::uoffset_t)) return nullptr;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), kMaxDepth, kMaxTables);
  if (!verifier.VerifyBuffer<Root>(nullptr)) return nullptr;
  return flatbuffers::GetRoot<Root>(bytes.data());
}

// The generated verifier accepts union types it does not know (forward compatibility);
// this side only reads the ones it does.
template <typename Root, typename Message>
const Root* parse(std::span<const std::uint8_t> bytes, ParseError* why) {
  const Root* p = verified_root<Root>(bytes);
  ParseError e = ParseError::kNone;
  if (p == nullptr || p->message() == nullptr || p->message_type() == Message::NONE) {
    e = ParseError::kMalformed;
  } else if (p->message_type() > Message::MAX) {
    e = ParseError::kUnknownMessage;
  }
  if (why != nullptr) *why = e;
  return e == ParseError::kNone ? p : nullptr;
}

}  // namespace

const ClientPacket* parse_client_packet(std::span<const std::uint8_t> bytes, ParseError* why) {
  return parse<ClientPacket, ClientMessage>(bytes, why);
}

const ServerPacket* parse_server_packet(std::span<const std::uint8_t> bytes, ParseError* why) {
  return parse<ServerPacket, ServerMessage>(bytes, why);
}

void build_hello(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t protocol_version,
                 std::string_view player_name, std::span<const std::uint8_t> transfer_token) {
  fbb.Clear();
  const auto name = fbb.CreateString(player_name.data(), player_name.size());
  const auto token = transfer_token.empty()
                         ? flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>>()
                         : fbb.CreateVector(transfer_token.data(), transfer_token.size());
  const auto hello = CreateHello(fbb, protocol_version, name, token);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::Hello, hello.Union()));
}

void build_join_party(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key) {
  fbb.Clear();
  const auto join = CreateJoinParty(fbb, key);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::JoinParty, join.Union()));
}

void build_join_guild(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t key) {
  fbb.Clear();
  const auto join = CreateJoinGuild(fbb, key);
  fbb.Finish(CreateClientPacket(fbb, ClientMessage::JoinGuild, join.Union()));
}

const char* to_string(DisconnectReason reason) {
  switch (reason) {
    case DisconnectReason::None:
      return "none";
    case DisconnectReason::ServerShutdown:
      return "server shutting down";
    case DisconnectReason::ProtocolMismatch:
      return "protocol version mismatch";
    case DisconnectReason::ServerFull:
      return "server full";
    case DisconnectReason::MalformedPackets:
      return "too many malformed packets";
    case DisconnectReason::InputFlood:
      return "input flood";
    case DisconnectReason::BadHello:
      return "bad hello";
    case DisconnectReason::Timeout:
      return "timed out";
    case DisconnectReason::ClientQuit:
      return "client quit";
    case DisconnectReason::Transferred:
      return "transferred to another zone";
  }
  return "unknown";
}

}  // namespace zone::protocol
