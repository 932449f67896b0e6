// libFuzzer target: bytes from the network, as the server decodes them (protocol v8).
//
// The input's first byte is the ENet channel the packet arrived on (0: reliable
// FlatBuffers ClientPacket, 1: unreliable 16-byte Input, anything else: a channel the
// protocol does not use); the rest is the packet. It goes through the server's own decoder,
// zone::Ingest (default limits), exactly as a network thread hands it over: on_event(),
// publish(), then the tick's take(). Besides "no crash, no sanitizer report", the event
// the tick receives must be the one docs/protocol.md prescribes:
//   - larger than limits.max_client_packet_bytes, on any channel: kBad oversize;
//   - channel 1: kInput if and only if exactly 16 bytes, and its values re-encode
//     (protocol::encode_input) to the same 16 bytes; otherwise kBad malformed;
//   - channel 0: kHello only for a buffer the FlatBuffers Verifier accepts holding a Hello,
//     with that Hello's version and name (the name passes the player-name rule's own
//     consistency checks, and the hello re-built with the client's builder decodes through
//     Ingest to the same version and name); kJoinParty (kJoinGuild) only for a
//     verifiable packet holding a JoinParty (JoinGuild), with its key; kAction (kChat)
//     only for a verifiable packet holding an Action (Chat), with its fields, and the
//     client's own builder gives the same event back; kBad
//     unknown_message for a verifiable packet of an unknown message type; otherwise kBad
//     malformed;
//   - any other channel: kBad malformed.
// The Ingest verifies tickets (a zone in ticket mode) with a fixed key, kFuzzSeed's, for
// world "fuzz": a hello with a ticket is checked, and its name is the ticket's exactly
// when the ticket verifies (seeds/make_seeds.cpp signs one with that key, never
// expiring, so the fuzzer starts from a good ticket).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "auth/keys.hpp"
#include "auth/ticket.hpp"
#include "auth/verifier.hpp"
#include "protocol/codec.hpp"
#include "protocol/player_name.hpp"
#include "seed_ticket.hpp"
#include "zone/ingest.hpp"

namespace {

using zone::DropReason;
using zone::InboundEvent;
using zone::Inbox;
using Kind = zone::InboundEvent::Kind;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_client_packet: property violated: %s\n", what);
    std::abort();
  }
}

constexpr zone::net::PeerId kPeer{7, 3, 1};

// One packet through a fresh Ingest, the way a network thread and the tick use it. The
// tick must receive exactly one event, for this peer; `inbox` keeps it (and its name).
const InboundEvent& decode(std::uint8_t channel, std::span<const std::uint8_t> bytes,
                           Inbox& inbox) {
  static const zone::auth::TicketVerifier verifier(
      zone::auth::public_key_of(zone::fuzz::kSeedTicketKey), zone::fuzz::kSeedTicketWorld);
  zone::Ingest ingest{zone::Ingest::Limits{}, &verifier};
  zone::net::NetEvent ev;
  ev.type = zone::net::NetEvent::Type::kReceive;
  ev.peer = kPeer;
  ev.data = 0;
  ev.channel = channel;
  ev.bytes = bytes;
  ingest.on_event(ev);
  ingest.publish();
  ingest.take(inbox);
  require(inbox.events.size() == 1, "one packet is one event for the tick");
  require(inbox.overflowed == 0, "one packet does not overflow the queue");
  const InboundEvent& e = inbox.events[0];
  require(e.peer == kPeer, "the event names the packet's peer");
  require(e.name_at <= inbox.text.size() && e.name_size <= inbox.text.size() - e.name_at,
          "the event's name lies within the inbox text");
  require(e.name_at + e.name_size + e.token_size <= inbox.text.size(),
          "the event's token (a chat line's receiver) lies within the inbox text");
  require(e.kind == Kind::kHello || e.kind == Kind::kChat || e.name_size + e.token_size == 0,
          "only a hello carries a name and a token, a chat line a text and a receiver");
  return e;
}

bool is_bad(const InboundEvent& e, DropReason why) {
  return e.kind == Kind::kBad && e.data == static_cast<std::uint32_t>(why);
}

void check_input(std::span<const std::uint8_t> bytes, const InboundEvent& e) {
  if (bytes.size() != zone::protocol::kInputBytes) {
    require(is_bad(e, DropReason::kMalformed), "channel 1, not 16 bytes: malformed");
    return;
  }
  require(e.kind == Kind::kInput, "channel 1, 16 bytes: an input");
  std::uint8_t again[zone::protocol::kInputBytes];
  zone::protocol::encode_input(e.input, again);
  for (std::size_t i = 0; i < zone::protocol::kInputBytes; ++i) {
    require(again[i] == bytes[i], "a decoded input re-encodes to the same bytes");
  }
}

void check_name(std::string_view name) {
  // The server's rule, at its largest configurable length (any bytes, no crash); the
  // length limit is exact: a name that passes fits in its own size, not one byte less.
  using zone::protocol::NameProblem;
  const NameProblem problem = zone::protocol::check_player_name(name, 255);
  if (problem == NameProblem::kNone) {
    require(zone::protocol::valid_player_name(name, name.size()), "a valid name fits its size");
    require(zone::protocol::check_player_name(name, name.size() - 1) == NameProblem::kTooLong,
            "a valid name is too long for one byte less");
  }
}

void check_action(const zone::protocol::Action* action, const InboundEvent& e) {
  using namespace zone::protocol;
  require(action != nullptr, "an action is a verifiable ClientPacket holding an Action");
  require(e.action_sequence == action->sequence() && e.action == action->action() &&
              e.target == action->target(),
          "the action's sequence, id and target are the packet's");
  const auto* args = action->args();
  const std::size_t n = args != nullptr ? args->size() : 0;
  require(e.too_many_args == (n > kMaxArgs), "more than kMaxArgs arguments is marked");
  require(e.arg_count == std::min<std::size_t>(n, kMaxArgs), "the argument count is the packet's");
  for (std::size_t i = 0; i < e.arg_count; ++i) {
    require(e.args[i] == args->Get(static_cast<flatbuffers::uoffset_t>(i)),
            "the arguments are the packet's");
  }
  // What a well-behaved client would have sent decodes the same.
  flatbuffers::FlatBufferBuilder fbb;
  build_action(fbb, e.action_sequence, e.action, e.target, {e.args.data(), e.arg_count});
  Inbox inbox2;
  const InboundEvent& e2 = decode(kReliableChannel, bytes_of(fbb), inbox2);
  require(e2.kind == Kind::kAction && e2.action_sequence == e.action_sequence &&
              e2.action == e.action && e2.target == e.target && e2.arg_count == e.arg_count &&
              e2.args == e.args,
          "a re-built action decodes the same");
}

void check_chat(const zone::protocol::Chat* chat, const InboundEvent& e, const Inbox& inbox) {
  using namespace zone::protocol;
  require(chat != nullptr, "a chat line is a verifiable ClientPacket holding a Chat");
  require(e.chat_channel == chat->channel(), "the chat line's channel is the packet's");
  const std::string_view text = chat->text() != nullptr ? chat->text()->string_view() : "";
  const std::string_view to = chat->to() != nullptr ? chat->to()->string_view() : "";
  require(inbox.chat_text_of(e) == text, "the chat line's text is the packet's");
  require(inbox.chat_to_of(e) == to, "the whisper's receiver is the packet's");
  flatbuffers::FlatBufferBuilder fbb;
  build_chat(fbb, static_cast<ChatChannel>(chat->channel()), text, to);
  Inbox inbox2;
  const InboundEvent& e2 = decode(kReliableChannel, bytes_of(fbb), inbox2);
  if (fbb.GetSize() > zone::Ingest::Limits{}.max_packet_bytes) {
    require(is_bad(e2, DropReason::kOversize), "a re-built chat line over the limit is oversize");
    return;
  }
  require(e2.kind == Kind::kChat && e2.chat_channel == e.chat_channel &&
              inbox2.chat_text_of(e2) == text && inbox2.chat_to_of(e2) == to,
          "a re-built chat line decodes the same");
}

void check_reliable(std::span<const std::uint8_t> bytes, const InboundEvent& e,
                    const Inbox& inbox) {
  using namespace zone::protocol;
  // What the FlatBuffers Verifier says of the bytes, independently of the decoder.
  bool verifiable = false;
  if (bytes.size() >= sizeof(flatbuffers::uoffset_t)) {
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    verifiable = verifier.VerifyBuffer<ClientPacket>(nullptr);
  }
  const ClientPacket* packet =
      verifiable ? flatbuffers::GetRoot<ClientPacket>(bytes.data()) : nullptr;
  const Hello* hello = packet ? packet->message_as_Hello() : nullptr;
  const JoinParty* join = packet ? packet->message_as_JoinParty() : nullptr;
  const JoinGuild* guild = packet ? packet->message_as_JoinGuild() : nullptr;
  const Action* action = packet ? packet->message_as_Action() : nullptr;
  const Chat* chat = packet ? packet->message_as_Chat() : nullptr;
  if (e.kind == Kind::kAction) {
    check_action(action, e);
    return;
  }
  if (e.kind == Kind::kChat) {
    check_chat(chat, e, inbox);
    return;
  }
  if (e.kind == Kind::kJoinParty || e.kind == Kind::kJoinGuild) {
    const bool party = e.kind == Kind::kJoinParty;
    require(party ? join != nullptr : guild != nullptr,
            "a group request is a verifiable ClientPacket holding that request");
    const std::uint64_t key = party ? join->key() : guild->key();
    require(e.group_key == key, "the request's key is the packet's");
    flatbuffers::FlatBufferBuilder fbb;
    if (party) {
      build_join_party(fbb, key);
    } else {
      build_join_guild(fbb, key);
    }
    Inbox inbox2;
    const InboundEvent& e2 = decode(kReliableChannel, bytes_of(fbb), inbox2);
    require(e2.kind == e.kind && e2.group_key == e.group_key,
            "the client's own request decodes the same");
    return;
  }
  if (e.kind != Kind::kHello) {
    require(e.kind == Kind::kBad,
            "channel 0: a hello, a group request, an action, a chat line or a bad packet");
    require(hello == nullptr, "a verifiable ClientPacket holding a Hello is accepted");
    require(join == nullptr && guild == nullptr,
            "a verifiable ClientPacket holding a JoinParty or JoinGuild is accepted");
    require(action == nullptr && chat == nullptr,
            "a verifiable ClientPacket holding an Action or a Chat is accepted");
    if (is_bad(e, DropReason::kUnknownMessage)) {
      require(packet != nullptr && packet->message() != nullptr &&
                  packet->message_type() > ClientMessage::MAX,
              "unknown_message: a verifiable packet of an unknown message type");
    } else {
      require(is_bad(e, DropReason::kMalformed), "channel 0, not a hello: malformed");
      require(packet == nullptr || packet->message() == nullptr ||
                  packet->message_type() == ClientMessage::NONE,
              "malformed: not a verifiable packet holding a message");
    }
    return;
  }
  require(hello != nullptr, "a hello is a verifiable ClientPacket holding a Hello");
  const std::string_view name = inbox.name_of(e);
  const std::string_view sent =
      hello->player_name() != nullptr ? hello->player_name()->string_view() : "";
  require(e.data == hello->protocol_version(), "the hello's version is the packet's");
  const auto* ticket = hello->ticket();
  require(e.ticket_checked, "every hello's ticket is checked in ticket mode");
  require(e.has_ticket == (ticket != nullptr && ticket->size() > 0),
          "a hello has a ticket when its ticket field is not empty");
  if (e.has_ticket && e.ticket_error == zone::auth::TicketError::kNone) {
    zone::auth::TicketLayout layout;
    require(zone::auth::read_ticket({ticket->data(), ticket->size()}, layout) ==
                    zone::auth::LayoutError::kNone &&
                layout.claims.world == zone::fuzz::kSeedTicketWorld,
            "a ticket let through has the layout and the world");
    require(name == layout.claims.name, "a good ticket's name is the hello's name");
    require(
        e.account_id == layout.claims.account_id && e.character_id == layout.claims.character_id,
        "a good ticket's ids are the event's");
  } else {
    require(name == sent, "the hello's name is the packet's");
  }
  check_name(name);
  // What a well-behaved client would have sent decodes the same.
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, hello->protocol_version(), name);
  Inbox inbox2;
  const InboundEvent& e2 = decode(kReliableChannel, bytes_of(fbb), inbox2);
  if (fbb.GetSize() > zone::Ingest::Limits{}.max_packet_bytes) {
    require(is_bad(e2, DropReason::kOversize), "a re-built hello over the limit is oversize");
    return;
  }
  require(e2.kind == Kind::kHello, "a re-built hello decodes as a hello");
  require(e2.data == e.data, "a re-built hello keeps its version");
  require(inbox2.name_of(e2) == name, "a re-built hello keeps its name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t channel = data[0];
  // A buffer of its own, as ENet allocates each packet's data (malloc-aligned, exactly its
  // size, so reading past it is caught).
  const std::vector<std::uint8_t> packet(data + 1, data + size);
  const std::span<const std::uint8_t> bytes(packet);
  Inbox inbox;
  const InboundEvent& e = decode(channel, bytes, inbox);
  if (bytes.size() > zone::Ingest::Limits{}.max_packet_bytes) {
    require(is_bad(e, DropReason::kOversize), "a packet over the limit is oversize");
    return 0;
  }
  if (channel == zone::protocol::kUnreliableChannel) {
    check_input(bytes, e);
  } else if (channel == zone::protocol::kReliableChannel) {
    check_reliable(bytes, e, inbox);
  } else {
    require(is_bad(e, DropReason::kMalformed), "a channel the protocol does not use: malformed");
  }
  return 0;
}
