// The login ticket key and world of the fuzz targets: fuzz_client_packet's Ingest verifies
// with this key's public half, and make_seeds signs a seed ticket with it.
#pragma once

#include "auth/keys.hpp"

namespace zone::fuzz {

inline const auth::SecretKey kSeedTicketKey{{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                             7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}};
inline constexpr const char* kSeedTicketWorld = "fuzz";

}  // namespace zone::fuzz
