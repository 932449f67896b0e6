// Writes the seed corpus of fuzz_client_packet into a folder: one valid packet of each
// kind, edge values, and a few near-misses. Run it again (and commit the output) when the
// wire protocol changes:
//   build-fuzz/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus/client_packet
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include <flatbuffers/flatbuffers.h>

#include "protocol/codec.hpp"

namespace {

void write(const std::string& dir, const std::string& name, std::span<const std::uint8_t> bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  using namespace zone::protocol;
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, kProtocolVersion, "alice");
  write(dir, "hello", bytes_of(fbb));
  build_hello(fbb, kProtocolVersion, "Zo\xC3\xAB \xE6\x97\xA5\xE6\x9C\xAC");
  write(dir, "hello-utf8", bytes_of(fbb));
  build_hello(fbb, kProtocolVersion, "admin\xE2\x80\xAEgnp");
  write(dir, "hello-bidi", bytes_of(fbb));
  build_hello(fbb, 999, std::string(40, 'x'));
  write(dir, "hello-long-old", bytes_of(fbb));
  build_input(fbb, 1, 0.0f, 0.0f, 0);
  write(dir, "input-zero", bytes_of(fbb));
  build_input(fbb, 77, 0.6f, -0.8f, 76);
  write(dir, "input", bytes_of(fbb));
  build_input(fbb, std::numeric_limits<std::uint32_t>::max(),
              std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
              std::numeric_limits<std::uint32_t>::max());
  write(dir, "input-extreme", bytes_of(fbb));
  // A verifiable packet whose union names a message type this protocol does not have.
  fbb.Clear();
  const auto input = CreateInput(fbb, 1, 0.0f, 0.0f, 0);
  fbb.Finish(CreateClientPacket(fbb, static_cast<ClientMessage>(7), input.Union()));
  write(dir, "unknown-message", bytes_of(fbb));
  return 0;
}
