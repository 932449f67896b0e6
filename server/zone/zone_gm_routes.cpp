// ZoneServer: the GM command routes (docs/operations.md) and their tick side.
//
// Every command needs the admin token; those that change something are POSTs, which the
// admin endpoint also holds to the same-origin rule (docs/security.md), so a hostile page
// in the operator's browser can neither send one without the token nor with it. A GET
// on a POST route is answered 405 and changes nothing. Arguments come in the query string
// (the body is not read). Each command, whatever its result, writes one audit line (who:
// the admin caller's address; what; the result) and counts in zone_gm_commands_total.
#include <charconv>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "zone/zone_server.hpp"

namespace zone {

namespace {

constexpr const char* kJson = "application/json; charset=utf-8";
// Long enough for a busy tick, short enough that a stalled zone answers.
constexpr auto kTickWait = std::chrono::seconds(5);
// What of an argument goes into the audit line (a broadcast's text, a ban's reason).
constexpr std::size_t kAuditTextBytes = 80;

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || err != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& text) {
  double v = 0.0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || err != std::errc{} || end != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// One line of the operator's text in the audit log: quoted, cut, control bytes escaped
// (it is the operator's, but a log line stays one line).
std::string audit_text(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kAuditTextBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kAuditTextBytes) out += "...";
  return out + "\"";
}

// The request's target: id= (an entity id) or name= (exactly one of them).
std::optional<GmTarget> parse_target(const httplib::Request& req, std::string& error) {
  const bool by_id = req.has_param("id");
  const bool by_name = req.has_param("name");
  if (by_id == by_name) {
    error = "name the player with id=ENTITY_ID or name=NAME (one of them)";
    return std::nullopt;
  }
  GmTarget t;
  if (by_id) {
    const auto id = parse_u64(req.get_param_value("id"));
    if (!id || *id == 0 || *id > 0xFFFFFFFFu) {
      error = "id= takes an entity id (a decimal number from 1 to 4294967295)";
      return std::nullopt;
    }
    t.id = static_cast<std::uint32_t>(*id);
  } else {
    t.name = req.get_param_value("name");
    if (t.name.empty() || t.name.size() > 255) {
      error = "name= takes a player name (1 to 255 bytes)";
      return std::nullopt;
    }
  }
  return t;
}

std::string describe(const GmTarget& t) {
  return t.id != 0 ? fmt::format("id={}", t.id) : fmt::format("name={}", audit_text(t.name));
}

}  // namespace

void ZoneServer::apply_gm_commands() {
  GmContext context{world_, sessions_, batches_, config_, store_.get()};
  for (PendingGm& p : gm_queue_.take()) {
    GmAnswer answer;
    try {
      answer = gm_desk_.apply(p.request, context);
    } catch (const std::exception& e) {
      answer = {GmResult::kError, std::string("internal error: ") + e.what(),
                nlohmann::json::object()};
    }
    p.done.set_value(std::move(answer));
  }
}

void ZoneServer::add_gm_routes() {
  // Answers, audits and counts one command. `what` is the command's arguments as the audit
  // line shows them.
  const auto finish = [this](const httplib::Request& req, httplib::Response& res, GmCommand command,
                             const std::string& what, GmAnswer answer) {
    gm_counters_.count(command, answer.result);
    // Who: the admin caller. The endpoint is the operator's (the token), so the address
    // tells which machine or tunnel acted, for the record.
    const std::string caller = req.remote_addr.empty()
                                   ? "unknown"
                                   : fmt::format("{}:{}", req.remote_addr, req.remote_port);
    log_.warn("gm audit: caller={} command={} {} result={} ({})", caller, to_string(command), what,
              to_string(answer.result), answer.message);
    nlohmann::json body = answer.detail.is_object() ? answer.detail : nlohmann::json::object();
    body["command"] = to_string(command);
    body["result"] = to_string(answer.result);
    body["message"] = answer.message;
    res.status = http_status(answer.result);
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                    kJson);
  };
  // Runs `request` on the tick and waits for its answer.
  const auto on_tick = [this](GmRequest request) -> GmAnswer {
    if (!accepting_.load()) return {GmResult::kRefused, "the zone is shutting down", {}};
    auto done = gm_queue_.request(std::move(request));
    if (done.wait_for(kTickWait) != std::future_status::ready) {
      return {GmResult::kError,
              "the tick loop did not answer within 5 s (the command may still apply)",
              {}};
    }
    return done.get();
  };
  const auto invalid = [](std::string message) {
    return GmAnswer{GmResult::kInvalid, std::move(message), nlohmann::json::object()};
  };
  // A target-only command (kick, unmute, inspect).
  const auto targeted = [=](GmCommand command) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      std::string error;
      const auto target = parse_target(req, error);
      if (!target) return finish(req, res, command, "", invalid(error));
      GmRequest r;
      r.command = command;
      r.target = *target;
      finish(req, res, command, describe(*target), on_tick(std::move(r)));
    };
  };
  const auto post_only = [this](const std::string& path) {
    admin_->get(path, admin::Access::kToken, [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content("this command changes the zone: send it as a POST\n", "text/plain");
    });
  };

  admin_->post("/admin/gm/kick", targeted(GmCommand::kKick));
  admin_->post("/admin/gm/unmute", targeted(GmCommand::kUnmute));
  admin_->get("/admin/gm/inspect", admin::Access::kToken, targeted(GmCommand::kInspect));
  // Inspect only reads: a POST is a mistake, not a command.
  admin_->post("/admin/gm/inspect", [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET");
    res.set_content("inspect only reads: send it as a GET\n", "text/plain");
  });

  admin_->post("/admin/gm/mute", [=](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const auto target = parse_target(req, error);
    if (!target) return finish(req, res, GmCommand::kMute, "", invalid(error));
    GmRequest r;
    r.command = GmCommand::kMute;
    r.target = *target;
    r.seconds = 600;  // ten minutes unless told
    if (req.has_param("seconds")) {
      const auto s = parse_u64(req.get_param_value("seconds"));
      if (!s || *s == 0 || *s > GmDesk::kMaxMuteSeconds) {
        return finish(req, res, GmCommand::kMute, describe(*target),
                      invalid(fmt::format("seconds= takes 1 to {}", GmDesk::kMaxMuteSeconds)));
      }
      r.seconds = static_cast<std::uint32_t>(*s);
    }
    const std::string what = fmt::format("{} seconds={}", describe(*target), r.seconds);
    finish(req, res, GmCommand::kMute, what, on_tick(std::move(r)));
  });

  admin_->post("/admin/gm/teleport", [=](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const auto target = parse_target(req, error);
    if (!target) return finish(req, res, GmCommand::kTeleport, "", invalid(error));
    const auto x = parse_number(req.get_param_value("x"));
    const auto y = parse_number(req.get_param_value("y"));
    if (!x || !y) {
      return finish(req, res, GmCommand::kTeleport, describe(*target),
                    invalid("x= and y= take the point in metres (finite numbers)"));
    }
    GmRequest r;
    r.command = GmCommand::kTeleport;
    r.target = *target;
    r.x = *x;
    r.y = *y;
    const std::string what = fmt::format("{} x={} y={}", describe(*target), *x, *y);
    finish(req, res, GmCommand::kTeleport, what, on_tick(std::move(r)));
  });

  admin_->post("/admin/gm/broadcast", [=](const httplib::Request& req, httplib::Response& res) {
    GmRequest r;
    r.command = GmCommand::kBroadcast;
    r.text = req.get_param_value("text");
    const std::string what = "text=" + audit_text(r.text);
    if (!req.has_param("text")) {
      return finish(req, res, GmCommand::kBroadcast, what, invalid("text= takes the line to send"));
    }
    finish(req, res, GmCommand::kBroadcast, what, on_tick(std::move(r)));
  });

  // Bans are by account: in ticket mode the login service's account, which a player
  // cannot change. A name is no identity in open mode (anyone joins under any name, and
  // a banned name is a new name away), so open mode has no bans: kick instead.
  const bool ticket_mode = config_.auth.mode == config::AuthMode::kTicket;
  admin_->post("/admin/gm/ban", [=, this](const httplib::Request& req, httplib::Response& res) {
    const auto account = parse_u64(req.get_param_value("account"));
    const std::string reason = req.get_param_value("reason");
    const std::string what =
        fmt::format("account={} reason={}", req.get_param_value("account"), audit_text(reason));
    if (!account || *account == 0) {
      return finish(req, res, GmCommand::kBan, what,
                    invalid("account= takes an account id (a decimal number, not 0)"));
    }
    if (reason.size() > BanList::kMaxReasonBytes) {
      return finish(req, res, GmCommand::kBan, what,
                    invalid(fmt::format("reason= is at most {} bytes", BanList::kMaxReasonBytes)));
    }
    if (!ticket_mode) {
      return finish(req, res, GmCommand::kBan, what,
                    {GmResult::kRefused,
                     "this zone is in open mode (auth.mode: open): players have no accounts and "
                     "any name is anyone's, so there is nothing to ban; kick instead",
                     nlohmann::json::object()});
    }
    Ban ban;
    ban.account = *account;
    ban.at = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
    ban.by = req.remote_addr;
    ban.reason = reason;
    std::string error;
    // On this admin thread: the file is written here, never on the tick.
    switch (bans_.ban(ban, error)) {
      case BanList::Change::kFull:
        return finish(req, res, GmCommand::kBan, what,
                      {GmResult::kRefused,
                       fmt::format("the ban list is full ({} accounts)", BanList::kMaxBans),
                       nlohmann::json::object()});
      case BanList::Change::kSaveFailed:
        return finish(req, res, GmCommand::kBan, what,
                      {GmResult::kError, "not banned: " + error, nlohmann::json::object()});
      case BanList::Change::kDone:
      case BanList::Change::kUnchanged:
        break;
    }
    // Banned from now on (a Hello is refused); its players online here are kicked.
    GmRequest r;
    r.command = GmCommand::kBan;
    r.account = *account;
    GmAnswer answer = on_tick(std::move(r));
    if (answer.result != GmResult::kOk) {
      // The ban holds (it is saved, and every Hello asks the list): only the kick of its
      // players here did not happen (the zone is closing, or the tick did not answer).
      answer = {GmResult::kOk,
                fmt::format("account {} banned; its players here not kicked: {}", *account,
                            answer.message),
                {{"account", *account}, {"kicked", nlohmann::json::array()}}};
    }
    finish(req, res, GmCommand::kBan, what, std::move(answer));
  });

  admin_->post("/admin/gm/unban", [=, this](const httplib::Request& req, httplib::Response& res) {
    const auto account = parse_u64(req.get_param_value("account"));
    const std::string what = fmt::format("account={}", req.get_param_value("account"));
    if (!account || *account == 0) {
      return finish(req, res, GmCommand::kUnban, what,
                    invalid("account= takes an account id (a decimal number, not 0)"));
    }
    std::string error;
    switch (bans_.unban(*account, error)) {
      case BanList::Change::kSaveFailed:
        return finish(req, res, GmCommand::kUnban, what,
                      {GmResult::kError, "not unbanned: " + error, nlohmann::json::object()});
      case BanList::Change::kUnchanged:
        return finish(req, res, GmCommand::kUnban, what,
                      {GmResult::kNotFound,
                       fmt::format("account {} is not banned", *account),
                       {{"account", *account}}});
      case BanList::Change::kDone:
      case BanList::Change::kFull:
        break;
    }
    finish(req, res, GmCommand::kUnban, what,
           {GmResult::kOk, fmt::format("account {} unbanned", *account), {{"account", *account}}});
  });

  for (const char* path : {"/admin/gm/kick", "/admin/gm/ban", "/admin/gm/unban", "/admin/gm/mute",
                           "/admin/gm/unmute", "/admin/gm/teleport", "/admin/gm/broadcast"}) {
    post_only(path);
  }
}

}  // namespace zone
