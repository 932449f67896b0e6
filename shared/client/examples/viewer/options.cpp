#include "options.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

namespace viewer {

namespace {

template <typename T>
bool parse_number(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// A login ticket file as zone-ticket writes it: hexadecimal digits on one line.
bool read_ticket(const std::string& path, std::vector<std::uint8_t>& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the ticket file " + path;
    return false;
  }
  std::string hex;
  std::getline(in, hex);
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back()))) hex.pop_back();
  if (hex.empty() || hex.size() % 2 != 0) {
    error = "the ticket file " + path + " does not hold hexadecimal digits";
    return false;
  }
  out.clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    std::uint8_t byte = 0;
    const auto [ptr, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    if (ec != std::errc() || ptr != hex.data() + i + 2) {
      error = "the ticket file " + path + " does not hold hexadecimal digits";
      return false;
    }
    out.push_back(byte);
  }
  return true;
}

}  // namespace

std::string usage() {
  return "usage: zoneclient_viewer [--server HOST:PORT] [--name NAME] [--ticket-file FILE]\n"
         "                         [--size WxH] [--scale PIXELS_PER_METRE]\n"
         "                         [--screenshot FILE.bmp [--after SECONDS]]\n"
         "  --server       the zone's game address (127.0.0.1:7777)\n"
         "  --name         the player's name (viewer)\n"
         "  --ticket-file  a login ticket as zone-ticket prints it (hexadecimal), for a zone\n"
         "                 in ticket mode\n"
         "  --size         the window (960x720)\n"
         "  --scale        zoom, pixels per metre (8; the mouse wheel changes it)\n"
         "  --screenshot   plays for --after seconds (3) once the world is drawn, saves the\n"
         "                 window as a BMP, prints what it showed and exits\n";
}

std::optional<Options> parse_options(const std::vector<std::string>& args, std::string& error,
                                     bool& help) {
  Options o;
  help = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      help = true;
      error = usage();
      return std::nullopt;
    }
    if (i + 1 >= args.size()) {
      error = flag + ": unknown option, or its value is missing\n" + usage();
      return std::nullopt;
    }
    const std::string& value = args[++i];
    if (flag == "--server") {
      const auto colon = value.rfind(':');
      if (colon == std::string::npos || colon == 0 ||
          !parse_number(value.substr(colon + 1), o.port) || o.port == 0) {
        error = "--server wants HOST:PORT, not " + value;
        return std::nullopt;
      }
      o.host = value.substr(0, colon);
    } else if (flag == "--name") {
      if (value.empty() || value.size() > 32) {
        error = "--name wants 1 to 32 bytes";
        return std::nullopt;
      }
      o.name = value;
    } else if (flag == "--ticket-file") {
      if (!read_ticket(value, o.ticket, error)) return std::nullopt;
    } else if (flag == "--size") {
      const auto x = value.find('x');
      if (x == std::string::npos || !parse_number(value.substr(0, x), o.width) ||
          !parse_number(value.substr(x + 1), o.height) || o.width < 320 || o.height < 240 ||
          o.width > 8192 || o.height > 8192) {
        error = "--size wants WxH, at least 320x240, not " + value;
        return std::nullopt;
      }
    } else if (flag == "--scale") {
      if (!parse_number(value, o.scale) || !(o.scale >= 0.5 && o.scale <= 200.0)) {
        error = "--scale wants 0.5 to 200 pixels per metre";
        return std::nullopt;
      }
    } else if (flag == "--screenshot") {
      o.screenshot = value;
    } else if (flag == "--after") {
      if (!parse_number(value, o.after) || !(o.after >= 0.0 && o.after <= 3600.0)) {
        error = "--after wants 0 to 3600 seconds";
        return std::nullopt;
      }
    } else {
      error = flag + ": unknown option\n" + usage();
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace viewer
