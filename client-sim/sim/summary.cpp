#include "sim/summary.hpp"

#include <charconv>

#include <fmt/format.h>

namespace zone::sim {

nlohmann::json Summary::to_json() const {
  return {
      {"scenario", scenario},
      {"seed", seed},
      {"threads", threads},
      {"bots_requested", bots_requested},
      {"bots_connected", bots_connected},
      {"bots_peak", bots_peak},
      {"bots_in_party_peak", bots_in_party_peak},
      {"bots_in_guild_peak", bots_in_guild_peak},
      {"connect_failures", connect_failures},
      {"disconnects", disconnects},
      {"disconnects_by_reason", disconnects_by_reason},
      {"duration_s", duration_s},
      {"rtt_ms", {{"p50", rtt_p50_ms}, {"p99", rtt_p99_ms}, {"max", rtt_max_ms}}},
      {"bytes_in_per_bot_per_s", bytes_in_per_bot_per_s},
      {"bytes_out_per_bot_per_s", bytes_out_per_bot_per_s},
      {"packets_in_per_bot_per_s", packets_in_per_bot_per_s},
      {"entities_in_view_avg", entities_in_view_avg},
      {"enters_total", enters_total},
      {"leaves_total", leaves_total},
      {"protocol_violations", protocol_violations},
      {"transfers", transfers},
      {"transfer_id_changes", transfer_id_changes},
      {"transfer_failures", transfer_failures},
      {"drops", drops},
      {"resumes", resumes},
      {"resume_id_changes", resume_id_changes},
      {"resumes_refused", resumes_refused},
      {"resume_retries", resume_retries},
      {"rejoins", rejoins},
      {"rejoin_loss_max_m", rejoin_loss_max_m},
      {"rejoin_loss_mean_m", rejoin_loss_mean_m},
      {"rejoin_property_changes", rejoin_property_changes},
      {"rejoin_wait_max_s", rejoin_wait_max_s},
      {"rejoin_unheld", rejoin_unheld},
      {"rejoin_lost_play_max_s", rejoin_lost_play_max_s},
      {"rejoin_lost_play_mean_s", rejoin_lost_play_mean_s},
      {"violations_by_kind", violations_by_kind},
      {"truth_rounds", truth_rounds},
      {"truth_fetch_failures", truth_fetch_failures},
      {"truth_expired_ticks", truth_expired_ticks},
      {"truth_checks", truth_checks},
      {"truth_entity_checks", truth_entity_checks},
      {"truth_mismatches", truth_mismatches},
      {"truth_skipped", truth_skipped},
      {"truth_stale_entities", truth_stale_entities},
      {"truth_deferred_spawns", truth_deferred_spawns},
      {"truth_tier_stale_entities", truth_tier_stale_entities},
      {"truth_max_staleness_ticks", truth_max_staleness_ticks},
      {"truth_party_checks", truth_party_checks},
      {"truth_property_checks", truth_property_checks},
      {"truth_coarse_checks", truth_coarse_checks},
      {"chunk_updates", chunk_updates},
      {"chunk_checks", chunk_checks},
      {"static_messages", static_messages},
      {"static_objects", static_objects},
      {"static_checks", static_checks},
      {"static_truth_cells", static_truth_cells},
      {"static_skipped", static_skipped},
      {"static_mismatches", static_mismatches},
      {"chunk_skipped", chunk_skipped},
      {"chunk_mismatches", chunk_mismatches},
      {"actions_sent", actions_sent},
      {"actions_ok", actions_ok},
      {"actions_by_name", actions_by_name},
      {"action_results", action_results},
      {"chat_lines_sent", chat_lines_sent},
      {"chat_refused", chat_refused},
      {"chat_lines_by_channel", chat_lines_by_channel},
      {"chat_refusals", chat_refusals},
      {"events_received", events_received},
      {"events_by_kind", events_by_kind},
      {"truth_event_checks", truth_event_checks},
      {"truth_event_missing", truth_event_missing},
      {"truth_event_extra", truth_event_extra},
      {"truth_event_duplicate", truth_event_duplicate},
      {"truth_event_before_spawn", truth_event_before_spawn},
      {"truth_event_ticks", truth_event_ticks},
      {"truth_event_skipped", truth_event_skipped},
  };
}

// Every number in the JSON summary, by its JSON name; a nested group such as rtt_ms
// {p50, p99, max} is named rtt_p50_ms, rtt_p99_ms, rtt_max_ms. One list of fields (the
// JSON) serves both the summary and --fail-if.
std::optional<double> Summary::metric(const std::string& name) const {
  const nlohmann::json j = to_json();
  for (const auto& [key, value] : j.items()) {
    if (value.is_number() && key == name) return value.get<double>();
    if (!value.is_object()) continue;
    const auto unit = key.rfind('_');
    if (unit == std::string::npos) continue;
    for (const auto& [sub, v] : value.items()) {
      const std::string flat = key.substr(0, unit) + "_" + sub + key.substr(unit);
      if (v.is_number() && flat == name) return v.get<double>();
    }
  }
  return std::nullopt;
}

std::optional<std::string> parse_fail_if(const std::string& text, FailIf& out) {
  const auto pos = text.find_first_of("<>");
  if (pos == std::string::npos || pos == 0) {
    return fmt::format("--fail-if '{}': expected METRIC>VALUE or METRIC<VALUE", text);
  }
  out.metric = text.substr(0, pos);
  out.op = text[pos];
  out.text = text;
  const std::string v = text.substr(pos + 1);
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out.value);
  if (ec != std::errc{} || ptr != v.data() + v.size()) {
    return fmt::format("--fail-if '{}': '{}' is not a number", text, v);
  }
  if (!Summary{}.metric(out.metric)) {
    return fmt::format("--fail-if '{}': unknown metric '{}'", text, out.metric);
  }
  return std::nullopt;
}

std::vector<std::string> crossed(const Summary& s, const std::vector<FailIf>& thresholds) {
  std::vector<std::string> out;
  for (const FailIf& f : thresholds) {
    const double v = *s.metric(f.metric);
    if ((f.op == '>' && v > f.value) || (f.op == '<' && v < f.value)) {
      out.push_back(fmt::format("{} (measured {:.3f})", f.text, v));
    }
  }
  return out;
}

}  // namespace zone::sim
