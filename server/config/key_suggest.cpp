#include "config/key_suggest.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace zone::config {
namespace {

std::string_view leaf_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

// How many edits still count as a typo of `word`: one for short words, up to three.
std::size_t typo_budget(std::string_view word) {
  return std::clamp<std::size_t>(word.size() / 3, 1, 3);
}

constexpr std::size_t kMaxSuggestions = 3;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows: the swap rule looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string_view> suggest_keys(std::string_view unknown,
                                           std::span<const std::string_view> known) {
  struct Scored {
    std::size_t distance;
    std::size_t order;
    std::string_view key;
  };
  std::vector<Scored> close;

  // Keys are case-sensitive, but "AOI" is still a typo of "aoi".
  const std::string lower_unknown = lower(unknown);
  const std::size_t budget = typo_budget(leaf_of(unknown));
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (known[i] == unknown) continue;  // e.g. a section name where a key was wanted
    const std::size_t d = edit_distance(lower_unknown, lower(known[i]));
    if (d <= budget) close.push_back({d, i, known[i]});
  }
  if (close.empty()) {
    // Right name, wrong section (or no section at all).
    const std::string_view leaf = leaf_of(lower_unknown);
    for (std::size_t i = 0; i < known.size(); ++i) {
      if (known[i].find('.') == std::string_view::npos) continue;  // sections: not leaves
      const std::size_t d = edit_distance(leaf, lower(leaf_of(known[i])));
      if (d <= typo_budget(leaf) && d < leaf.size()) close.push_back({d, i, known[i]});
    }
  }
  std::stable_sort(close.begin(), close.end(), [](const Scored& x, const Scored& y) {
    return x.distance != y.distance ? x.distance < y.distance : x.order < y.order;
  });
  std::vector<std::string_view> out;
  for (const auto& s : close) {
    // Only the best-scoring candidates: a distance-1 match makes distance-2 ones noise.
    if (out.size() == kMaxSuggestions || s.distance != close.front().distance) break;
    out.push_back(s.key);
  }
  return out;
}

}  // namespace zone::config
