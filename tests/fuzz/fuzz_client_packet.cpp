// libFuzzer target: bytes from the network, as the server reads them.
//
// Every client packet goes through the decoder below (size cap, FlatBuffers Verifier,
// known message types), then through the server's checks of its contents that need no
// network: the player-name rule of Hello. Besides "no crash, no sanitizer report", it
// checks properties of what the decoder accepts:
//   - every field of an accepted packet can be read (the Verifier vouched for it);
//   - an accepted packet re-encoded with the client's own builders decodes to the same
//     values (what the server reads is what a well-behaved client could have sent).
//
// The wire protocol is being replaced: when it is, change kDecode (one line) and the
// per-message checks in check_message().
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include <flatbuffers/flatbuffers.h>

#include "protocol/codec.hpp"
#include "protocol/player_name.hpp"

namespace {

using zone::protocol::ClientPacket;

// ---- The decoder under test: the one line to change with the protocol. ---------------
const auto kDecode = [](std::span<const std::uint8_t> bytes) {
  return zone::protocol::parse_client_packet(bytes);
};

// The largest packet the server reads at all (limits.max_client_packet_bytes' maximum).
constexpr std::size_t kMaxPacketBytes = 65536;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_client_packet: property violated: %s\n", what);
    std::abort();
  }
}

// The same value: bit for bit, except that -0.0 may come back as +0.0 (FlatBuffers does
// not write a field equal to its default, 0.0, and -0.0 == 0.0), and any NaN as a NaN.
bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

void check_message(const ClientPacket& packet) {
  flatbuffers::FlatBufferBuilder fbb;
  if (const auto* hello = packet.message_as_Hello()) {
    const std::string_view name =
        hello->player_name() != nullptr ? hello->player_name()->string_view() : "";
    // The server's rule, at its largest configurable length (any bytes, no crash); the
    // length limit is exact: a name that passes fits in its own size, not one byte less.
    using zone::protocol::NameProblem;
    const NameProblem problem = zone::protocol::check_player_name(name, 255);
    if (problem == NameProblem::kNone) {
      require(zone::protocol::valid_player_name(name, name.size()), "a valid name fits its size");
      require(zone::protocol::check_player_name(name, name.size() - 1) == NameProblem::kTooLong,
              "a valid name is too long for one byte less");
    }
    zone::protocol::build_hello(fbb, hello->protocol_version(), name);
    const ClientPacket* again = kDecode(zone::protocol::bytes_of(fbb));
    require(again != nullptr && again->message_as_Hello() != nullptr, "re-encoded Hello decodes");
    const auto* h2 = again->message_as_Hello();
    require(h2->protocol_version() == hello->protocol_version(), "Hello version round-trips");
    const std::string_view name2 = h2->player_name() ? h2->player_name()->string_view() : "";
    require(name2 == name, "Hello name round-trips");
  } else if (const auto* input = packet.message_as_Input()) {
    zone::protocol::build_input(fbb, input->sequence(), input->move_x(), input->move_y(),
                                input->ack_tick());
    const ClientPacket* again = kDecode(zone::protocol::bytes_of(fbb));
    require(again != nullptr && again->message_as_Input() != nullptr, "re-encoded Input decodes");
    const auto* i2 = again->message_as_Input();
    require(i2->sequence() == input->sequence() && i2->ack_tick() == input->ack_tick() &&
                same_float(i2->move_x(), input->move_x()) &&
                same_float(i2->move_y(), input->move_y()),
            "Input round-trips");
  } else {
    require(false, "the decoder accepted a packet with no known message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxPacketBytes) return -1;  // the server drops these unread
  const ClientPacket* packet = kDecode({data, size});
  if (packet == nullptr) return 0;
  check_message(*packet);
  return 0;
}
