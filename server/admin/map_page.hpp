// The live map page served at "/": one self-contained HTML file with plain JavaScript
// and a canvas (no build step, nothing loaded from the internet). The page itself lives
// in server/admin/map.html and is embedded at build time.
#pragma once

#include <string_view>

namespace zone::admin {

extern const std::string_view kMapPage;

}  // namespace zone::admin
