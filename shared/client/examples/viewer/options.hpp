// The viewer's command line (docs/client.md, "The sample client").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace viewer {

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  std::string name = "viewer";
  std::vector<std::uint8_t> ticket;  // empty: an open zone
  int width = 960, height = 720;
  double scale = 8.0;        // pixels per metre
  std::string screenshot;    // "": none
  double after = 3.0;        // seconds of play before the screenshot
  double wait_limit = 60.0;  // seconds the screenshot run waits for the world at most
};

// The options, or nullopt with `error` saying what is wrong; for --help, nullopt with
// `help` set and the usage text in `error`.
std::optional<Options> parse_options(const std::vector<std::string>& args, std::string& error,
                                     bool& help);

// The usage text.
std::string usage();

}  // namespace viewer
