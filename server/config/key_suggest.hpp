// "Did you mean ...?" for unknown configuration keys.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace zone::config {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
// two adjacent characters each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Known keys the unknown dotted path `unknown` was probably meant to be, best first (at
// most three; empty when nothing is close). `known` holds every valid dotted path and
// every section name. Two rules:
//   - a known path within a small edit distance of the whole path ("aoi.cel_size" ->
//     "aoi.cell_size", "netwrok" -> "network");
//   - failing that, known keys with the same (or nearly the same) last component in
//     another section ("world.cell_size" -> "aoi.cell_size", "port" -> "network.port").
// Case is ignored when comparing ("AOI" -> "aoi"); `unknown` itself is never suggested.
std::vector<std::string_view> suggest_keys(std::string_view unknown,
                                           std::span<const std::string_view> known);

}  // namespace zone::config
