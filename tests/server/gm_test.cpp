// GM commands (docs/operations.md) on a real zone with bots: each command's effect, who
// may send it (the token, POST, same origin), its audit line and its count in /metrics.
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/issue.hpp"
#include "auth/keys.hpp"
#include "harness.hpp"
#include "protocol/codec.hpp"
#include "raw_http.hpp"
#include "test_util.hpp"
#include "zone/ban_list.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;
using test::body_of;
using test::status_of;

namespace {

const std::string kToken = "gm-test-token-0123456789abcdef";

// A zone whose log goes to a file the test reads (the audit lines), ticking on its own
// thread like test::ServerThread.
class LoggedZone {
 public:
  explicit LoggedZone(const config::ZoneConfig& c)
      : file_(std::tmpfile()),
        log_(config::LogLevel::kWarn, file_.get()),
        server_(std::make_unique<ZoneServer>(
            c, log_, AdminSetup{.token = kToken, .config_source = nullptr})) {
    thread_ = std::thread([this] { server_->run([this] { return stop_.load(); }); });
  }
  // The file closes after log_ (declared after it) has stopped its writer thread.
  ~LoggedZone() {
    stop();
    server_.reset();
  }
  LoggedZone(const LoggedZone&) = delete;
  LoggedZone& operator=(const LoggedZone&) = delete;
  std::uint16_t port() const { return server_->port(); }
  std::uint16_t admin_port() const { return server_->admin_port(); }
  ZoneServer& stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return *server_;
  }
  // The log's lines so far.
  std::vector<std::string> lines() {
    log_.flush();
    std::fflush(file_.get());
    std::rewind(file_.get());
    std::vector<std::string> out;
    char buf[4096];
    while (std::fgets(buf, sizeof(buf), file_.get()) != nullptr) out.emplace_back(buf);
    std::fseek(file_.get(), 0, SEEK_END);
    return out;
  }
  std::vector<std::string> audit_lines() {
    std::vector<std::string> out;
    for (const std::string& l : lines()) {
      if (l.find("gm audit:") != std::string::npos) out.push_back(l);
    }
    return out;
  }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file_;
  Logger log_;
  std::unique_ptr<ZoneServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string bearer() {
  return "Authorization: Bearer " + kToken + "\r\n";
}
std::string request(std::uint16_t port, const std::string& method, const std::string& path,
                    const std::string& headers = bearer(), const std::string& body = "") {
  return test::http_exchange(
      port, method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n" +
                headers + "Content-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n\r\n" + body);
}
std::string post(std::uint16_t port, const std::string& path) {
  return request(port, "POST", path);
}
nlohmann::json json_of(const std::string& response) {
  return nlohmann::json::parse(body_of(response));
}

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}
bool closed(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kClosed;
}

config::ZoneConfig open_zone(const std::filesystem::path& dir) {
  config::ZoneConfig c = test::tiny_zone();
  c.admin.bans_file = (dir / "bans.json").string();
  c.chat.lines_per_second = 50;  // the tests speak often
  c.chat.burst = 50;
  return c;
}

// A fresh directory for a test's bans file.
struct TempDir {
  std::filesystem::path path;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("zone-gm-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The chat lines a bot received with this text (its recent events), and their channels.
std::vector<std::int32_t> heard_on(const client::Bot& bot, const std::string& text) {
  std::vector<std::int32_t> channels;
  for (const client::EventDetail& e : bot.last_events()) {
    if (e.event.kind == protocol::kChatEvent && e.text == text) {
      channels.push_back(e.args.empty() ? -1 : e.args[0]);
    }
  }
  return channels;
}
bool heard_text(const client::Bot& bot, const std::string& text) {
  return !heard_on(bot, text).empty();
}
std::uint64_t answered(const client::Bot& bot, protocol::ChatStatus status) {
  return bot.game().chat_results[static_cast<std::size_t>(status)];
}

void say(test::Clients& clients, client::Bot& bot, const std::string& text) {
  bot.send_chat(clients.host_of(bot), protocol::ChatChannel::kZone, text);
}

std::string metric(std::uint16_t admin_port, const std::string& command,
                   const std::string& result) {
  const std::string body = body_of(request(admin_port, "GET", "/metrics", ""));
  const std::regex line("zone_gm_commands_total\\{command=\"" + command + "\",result=\"" + result +
                        "\"\\} ([0-9]+)");
  std::smatch m;
  return std::regex_search(body, m, line) ? m[1].str() : "missing";
}

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(std::time(nullptr));
}

struct LoginService {
  auth::KeyPair keys = auth::generate_key_pair();
  std::vector<std::uint8_t> ticket(std::uint64_t account, std::uint64_t character,
                                   const std::string& name) const {
    auth::TicketClaims c;
    c.account_id = account;
    c.character_id = character;
    c.issued_at = unix_now();
    c.expires_at = c.issued_at + 600;
    c.name = name;
    c.world = "emerald";
    std::vector<std::uint8_t> t;
    REQUIRE(auth::issue_ticket(c, keys.secret, t) == auth::LayoutError::kNone);
    return t;
  }
};

auto with_ticket(std::vector<std::uint8_t> t) {
  return [t = std::move(t)](client::Bot& b) { b.set_ticket(t); };
}

}  // namespace

TEST_CASE("gm: kick by id and by name disconnects the player with reason Kicked, audited") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("kick")};
  LoggedZone zone(open_zone(dir.path));
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  client::Bot& b = clients.add("bob", zone.port());
  client::Bot& c = clients.add("carol", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a) && playing(b) && playing(c); }, 5s));
  const std::uint16_t admin = zone.admin_port();

  const std::string by_id =
      post(admin, "/admin/gm/kick?id=" + std::to_string(a.welcome().entity_id));
  CHECK(status_of(by_id) == 200);
  CHECK(json_of(by_id).at("result") == "ok");
  CHECK(json_of(by_id).at("name") == "alice");
  CHECK(status_of(post(admin, "/admin/gm/kick?name=bob")) == 200);
  REQUIRE(clients.pump_until([&] { return closed(a) && closed(b); }, 3s));
  CHECK(test::reason_of(a) == test::reason_of(DisconnectReason::Kicked));
  CHECK(test::reason_of(b) == test::reason_of(DisconnectReason::Kicked));
  clients.pump(300ms);
  CHECK(playing(c));  // nobody else

  // No such player, or no target, or both: answered, nobody kicked.
  CHECK(status_of(post(admin, "/admin/gm/kick?name=nobody")) == 404);
  CHECK(status_of(post(admin, "/admin/gm/kick?id=999999")) == 404);
  CHECK(status_of(post(admin, "/admin/gm/kick")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/kick?id=1&name=carol")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/kick?id=-3")) == 400);
  // An NPC is no player: it has no client to kick.
  CHECK(status_of(post(admin, "/admin/gm/kick?id=1")) == 404);
  clients.pump(200ms);
  CHECK(playing(c));

  CHECK(metric(admin, "kick", "ok") == "2");
  CHECK(metric(admin, "kick", "not_found") == "3");
  CHECK(metric(admin, "kick", "invalid") == "3");
  CHECK(metric(admin, "ban", "ok") == "0");  // every pair exported from the start

  // One audit line per command: who (the caller's address), what, the result.
  const std::vector<std::string> audit = zone.audit_lines();
  REQUIRE(audit.size() == 8);
  CHECK(audit[0].find("caller=127.0.0.1:") != std::string::npos);
  CHECK(audit[0].find("command=kick id=" + std::to_string(a.welcome().entity_id)) !=
        std::string::npos);
  CHECK(audit[0].find("result=ok") != std::string::npos);
  CHECK(audit[1].find("command=kick name=\"bob\"") != std::string::npos);
  CHECK(audit[2].find("result=not_found") != std::string::npos);
  CHECK(audit[4].find("result=invalid") != std::string::npos);
  zone.stop();
  CHECK(test::disconnects(zone.stop(), DisconnectReason::Kicked) == 2);
}

TEST_CASE(
    "gm: every command needs the token, its method, and the same origin - a hostile page's "
    "requests change nothing") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("access")};
  LoggedZone zone(open_zone(dir.path));
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a); }, 5s));
  const std::uint16_t admin = zone.admin_port();
  const std::string id = std::to_string(a.welcome().entity_id);
  const std::string self = "http://127.0.0.1:" + std::to_string(admin);

  const std::vector<std::string> posts = {
      "/admin/gm/kick?id=" + id,       "/admin/gm/ban?account=5",
      "/admin/gm/unban?account=5",     "/admin/gm/mute?id=" + id,
      "/admin/gm/unmute?id=" + id,     "/admin/gm/teleport?id=" + id + "&x=5&y=5",
      "/admin/gm/broadcast?text=pwned"};
  for (const std::string& path : posts) {
    CAPTURE(path);
    // No token, a wrong one.
    CHECK(status_of(request(admin, "POST", path, "")) == 401);
    CHECK(status_of(request(admin, "POST", path,
                            "Authorization: Bearer wrong-token-0123456789\r\n")) == 401);
    // The wrong method, token or not: a GET never changes anything.
    CHECK(status_of(request(admin, "GET", path, "")) == 401);
    CHECK(status_of(request(admin, "GET", path)) == 405);
    // What a hostile page's form or fetch(..., {mode: 'no-cors'}) sends, and the same with
    // the token (a leaked one): refused before the handler.
    CHECK(status_of(request(admin, "POST", path,
                            "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n"
                            "Content-Type: text/plain\r\n",
                            "x")) == 403);
    CHECK(status_of(request(admin, "POST", path,
                            bearer() + "Origin: http://evil.example\r\nSec-Fetch-Site: "
                                       "cross-site\r\nContent-Type: text/plain\r\n",
                            "x")) == 403);
    CHECK(status_of(request(admin, "POST", path, bearer() + "Sec-Fetch-Site: same-site\r\n")) ==
          403);
    CHECK(status_of(request(admin, "POST", path, bearer() + "Origin: null\r\n")) == 403);
  }
  // Inspect reads: a GET with the token, nothing without it, and not a POST.
  const std::string inspect = "/admin/gm/inspect?id=" + id;
  CHECK(status_of(request(admin, "GET", inspect, "")) == 401);
  CHECK(status_of(request(admin, "GET", inspect, "Authorization: Bearer nope-0123456789abc\r\n")) ==
        401);
  CHECK(status_of(request(admin, "POST", inspect)) == 405);
  CHECK(status_of(request(admin, "GET", inspect,
                          "Host: evil.example\r\n")) != 200);  // two Host headers: refused
  clients.pump(300ms);
  CHECK(playing(a));
  // Nothing reached a handler: no audit line, nothing counted.
  CHECK(zone.audit_lines().empty());
  for (const char* command : {"kick", "ban", "unban", "mute", "unmute", "teleport", "broadcast"}) {
    CAPTURE(command);
    for (const char* result : {"ok", "invalid", "not_found", "refused", "error"}) {
      CHECK(metric(admin, command, result) == "0");
    }
  }
  // The map page's own origin may (it sends the token).
  CHECK(status_of(request(admin, "POST", "/admin/gm/kick?id=" + id,
                          bearer() + "Origin: " + self + "\r\nSec-Fetch-Site: same-origin\r\n")) ==
        200);
  REQUIRE(clients.pump_until([&] { return closed(a); }, 3s));
  CHECK(test::reason_of(a) == test::reason_of(DisconnectReason::Kicked));
}

TEST_CASE(
    "gm: a banned account is kicked, its tickets refused with Banned - after a restart too - "
    "until unbanned") {
  net::EnetLibrary enet;
  const LoginService login;
  const std::filesystem::path dir = temp_dir("ban");
  config::ZoneConfig cfg = open_zone(dir);
  cfg.admin.bans_file = (dir / "data" / "bans.json").string();  // its directory is made
  cfg.auth.mode = config::AuthMode::kTicket;
  cfg.auth.public_key = auth::to_hex(login.keys.public_key);
  cfg.auth.world = "emerald";
  {
    LoggedZone zone(cfg);
    test::Clients clients;
    client::Bot& rogue = clients.add("x", zone.port(), with_ticket(login.ticket(501, 1, "rogue")));
    client::Bot& other = clients.add("y", zone.port(), with_ticket(login.ticket(502, 2, "other")));
    REQUIRE(clients.pump_until([&] { return playing(rogue) && playing(other); }, 5s));
    const std::uint16_t admin = zone.admin_port();

    const std::string banned = post(admin, "/admin/gm/ban?account=501&reason=gold%20selling");
    CHECK(status_of(banned) == 200);
    CHECK(json_of(banned).at("kicked").size() == 1);
    REQUIRE(clients.pump_until([&] { return closed(rogue); }, 3s));
    CHECK(test::reason_of(rogue) == test::reason_of(DisconnectReason::Banned));
    CHECK(playing(other));
    // A new ticket of the account (another character too) is refused at Hello.
    client::Bot& again = clients.add("x", zone.port(), with_ticket(login.ticket(501, 3, "alt")));
    REQUIRE(clients.pump_until([&] { return closed(again); }, 3s));
    CHECK(test::reason_of(again) == test::reason_of(DisconnectReason::Banned));
    // Banning again changes nothing; bad arguments are refused.
    CHECK(status_of(post(admin, "/admin/gm/ban?account=501")) == 200);
    CHECK(status_of(post(admin, "/admin/gm/ban?account=0")) == 400);
    CHECK(status_of(post(admin, "/admin/gm/ban?account=x")) == 400);
    CHECK(status_of(post(admin, "/admin/gm/ban")) == 400);
    CHECK(status_of(post(admin, "/admin/gm/unban?account=777")) == 404);
    CHECK(metric(admin, "ban", "ok") == "2");
    CHECK(metric(admin, "ban", "invalid") == "3");
    const std::vector<std::string> audit = zone.audit_lines();
    REQUIRE(audit.size() == 6);
    CHECK(audit[0].find("command=ban account=501 reason=\"gold selling\"") != std::string::npos);
    CHECK(audit[0].find("result=ok") != std::string::npos);
    CHECK(test::disconnects(zone.stop(), DisconnectReason::Banned) == 2);
  }
  // The file holds the ban (written whole: no temporary file left over).
  REQUIRE(std::filesystem::exists(dir / "data" / "bans.json"));
  CHECK_FALSE(std::filesystem::exists(dir / "data" / "bans.json.tmp"));
  {
    std::ifstream in(dir / "data" / "bans.json");
    const nlohmann::json doc = nlohmann::json::parse(in);
    REQUIRE(doc.at("bans").size() == 1);
    CHECK(doc.at("bans")[0].at("account") == 501);
    CHECK(doc.at("bans")[0].at("reason") == "gold selling");
    CHECK(doc.at("bans")[0].at("by") == "127.0.0.1");
  }
  // A restart reads it: still refused.
  {
    LoggedZone zone(cfg);
    test::Clients clients;
    client::Bot& back = clients.add("x", zone.port(), with_ticket(login.ticket(501, 1, "rogue")));
    REQUIRE(clients.pump_until([&] { return closed(back); }, 3s));
    CHECK(test::reason_of(back) == test::reason_of(DisconnectReason::Banned));
    CHECK(status_of(post(zone.admin_port(), "/admin/gm/unban?account=501")) == 200);
    client::Bot& forgiven =
        clients.add("x", zone.port(), with_ticket(login.ticket(501, 1, "rogue")));
    REQUIRE(clients.pump_until([&] { return playing(forgiven); }, 5s));
  }
  {
    std::ifstream in(dir / "data" / "bans.json");
    CHECK(nlohmann::json::parse(in).at("bans").empty());
  }
  // A damaged file stops the start rather than forget bans.
  {
    std::ofstream(dir / "data" / "bans.json") << "{\"version\": 1, \"bans\": [{\"acc";
    Logger log(config::LogLevel::kError);
    CHECK_THROWS_WITH_AS(ZoneServer(cfg, log), doctest::Contains("admin.bans_file"),
                         std::runtime_error);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("gm: open mode has no accounts to ban - the ban is refused, kick instead") {
  net::EnetLibrary enet;
  const std::filesystem::path dir = temp_dir("openban");
  LoggedZone zone(open_zone(dir));
  const std::string answer = post(zone.admin_port(), "/admin/gm/ban?account=3");
  CHECK(status_of(answer) == 409);
  CHECK(json_of(answer).at("result") == "refused");
  CHECK_FALSE(std::filesystem::exists(dir / "bans.json"));
  CHECK(metric(zone.admin_port(), "ban", "refused") == "1");
  std::filesystem::remove_all(dir);
}

TEST_CASE("gm: a muted player's lines are answered Muted and reach nobody - until unmuted") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("mute")};
  LoggedZone zone(open_zone(dir.path));
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  client::Bot& b = clients.add("bob", zone.port());
  client::Bot& c = clients.add("carol", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a) && playing(b) && playing(c); }, 5s));
  const std::uint16_t admin = zone.admin_port();

  const std::string muted = post(admin, "/admin/gm/mute?name=alice&seconds=60");
  CHECK(status_of(muted) == 200);
  CHECK(json_of(muted).at("seconds") == 60);
  say(clients, a, "can you hear me");
  say(clients, b, "bob here");
  REQUIRE(clients.pump_until(
      [&] { return answered(a, protocol::ChatStatus::Muted) == 1 && heard_text(c, "bob here"); },
      3s));
  clients.pump(300ms);
  CHECK(answered(a, protocol::ChatStatus::Muted) == 1);
  for (const client::Bot* bot : {&a, &b, &c}) CHECK_FALSE(heard_text(*bot, "can you hear me"));
  CHECK(heard_text(a, "bob here"));  // a muted player still hears

  // Inspect says so.
  CHECK(json_of(request(admin, "GET", "/admin/gm/inspect?name=alice")).at("muted") == true);
  CHECK(status_of(post(admin, "/admin/gm/mute?name=alice&seconds=0")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/mute?name=alice&seconds=99999999")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/unmute?name=alice")) == 200);
  say(clients, a, "back again");
  REQUIRE(clients.pump_until(
      [&] { return heard_text(b, "back again") && heard_text(c, "back again"); }, 3s));
  CHECK(answered(a, protocol::ChatStatus::Muted) == 1);

  // A short mute ends by itself.
  CHECK(status_of(post(admin, "/admin/gm/mute?name=alice&seconds=1")) == 200);
  say(clients, a, "muted again");
  REQUIRE(clients.pump_until([&] { return answered(a, protocol::ChatStatus::Muted) == 2; }, 3s));
  clients.pump(1200ms);
  say(clients, a, "free");
  REQUIRE(clients.pump_until([&] { return heard_text(b, "free"); }, 3s));
  CHECK_FALSE(heard_text(b, "muted again"));
  CHECK(metric(admin, "mute", "ok") == "2");
  CHECK(metric(admin, "unmute", "ok") == "1");
  CHECK(
      zone.stop().counters().chat_refused[static_cast<std::size_t>(protocol::ChatStatus::Muted)] ==
      2);
}

TEST_CASE("gm: teleport moves a player or an NPC to the point - /debug/truth has it there") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("teleport")};
  config::ZoneConfig cfg = open_zone(dir.path);
  cfg.debug.truth = true;
  LoggedZone zone(cfg);
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a); }, 5s));
  const std::uint16_t admin = zone.admin_port();
  const std::uint32_t id = a.welcome().entity_id;

  const auto position = [&](std::uint32_t entity) -> std::pair<double, double> {
    const nlohmann::json truth = json_of(request(admin, "GET", "/debug/truth?only=positions"));
    for (const nlohmann::json& e : truth.at("entities")) {
      if (e[0] == entity) return {e[1].get<double>(), e[2].get<double>()};
    }
    return {-1.0, -1.0};
  };
  CHECK(status_of(post(admin, "/admin/gm/teleport?id=" + std::to_string(id) + "&x=3.5&y=17.25")) ==
        200);
  clients.pump(100ms);  // the bot stands still (no intent): it stays there
  auto [x, y] = position(id);
  CHECK(x == doctest::Approx(3.5).epsilon(0.001));
  CHECK(y == doctest::Approx(17.25).epsilon(0.001));
  // An NPC (entity 1 is the first of the zone's NPCs), by id; idle NPCs stay put.
  CHECK(status_of(post(admin, "/admin/gm/teleport?id=1&x=10&y=2")) == 200);
  clients.pump(100ms);
  std::tie(x, y) = position(1);
  CHECK(x == doctest::Approx(10.0).epsilon(0.001));
  CHECK(y == doctest::Approx(2.0).epsilon(0.001));
  // Outside the zone: refused, nothing moves. Bad numbers: invalid.
  CHECK(status_of(post(admin, "/admin/gm/teleport?id=" + std::to_string(id) + "&x=500&y=5")) ==
        409);
  CHECK(status_of(post(admin, "/admin/gm/teleport?id=" + std::to_string(id) + "&x=nan&y=5")) ==
        400);
  CHECK(status_of(post(admin, "/admin/gm/teleport?id=" + std::to_string(id) + "&x=1")) == 400);
  std::tie(x, y) = position(id);
  CHECK(x == doctest::Approx(3.5).epsilon(0.001));
  CHECK(metric(admin, "teleport", "ok") == "2");
  CHECK(metric(admin, "teleport", "refused") == "1");
  CHECK(metric(admin, "teleport", "invalid") == "2");
}

TEST_CASE("gm: a broadcast reaches every player as a system chat line (channel 5)") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("broadcast")};
  LoggedZone zone(open_zone(dir.path));
  test::Clients clients;
  std::vector<client::Bot*> bots;
  for (const char* name : {"alice", "bob", "carol", "dave"})
    bots.push_back(&clients.add(name, zone.port()));
  REQUIRE(clients.pump_until(
      [&] { return std::all_of(bots.begin(), bots.end(), [](auto* b) { return playing(*b); }); },
      5s));
  const std::uint16_t admin = zone.admin_port();
  const std::string answer =
      post(admin, "/admin/gm/broadcast?text=Server%20restarts%20in%205%20minutes%20%E2%9C%A8");
  CHECK(status_of(answer) == 200);
  CHECK(json_of(answer).at("players") == 4);
  const std::string line = "Server restarts in 5 minutes \xE2\x9C\xA8";
  REQUIRE(clients.pump_until(
      [&] {
        return std::all_of(bots.begin(), bots.end(), [&](auto* b) { return heard_text(*b, line); });
      },
      3s));
  for (client::Bot* b : bots) {
    CHECK(heard_on(*b, line) == std::vector<std::int32_t>{5});  // once, on the system channel
  }
  // The chat rule's characters and length.
  CHECK(status_of(post(admin, "/admin/gm/broadcast?text=")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/broadcast")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/broadcast?text=a%0Ab")) == 400);
  CHECK(status_of(post(admin, "/admin/gm/broadcast?text=" + std::string(201, 'x'))) == 400);
  CHECK(metric(admin, "broadcast", "ok") == "1");
  CHECK(metric(admin, "broadcast", "invalid") == "4");
  const std::vector<std::string> audit = zone.audit_lines();
  REQUIRE(audit.size() == 5);
  CHECK(audit[0].find("command=broadcast text=\"Server restarts") != std::string::npos);
  // The operator's text stays on one line of the log.
  CHECK(audit[3].find("text=\"a\\x0ab\"") != std::string::npos);
}

TEST_CASE("gm: inspect shows a character's live state as JSON") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("inspect")};
  LoggedZone zone(open_zone(dir.path));
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  client::Bot& twin1 = clients.add("twin", zone.port());
  client::Bot& twin2 = clients.add("twin", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a) && playing(twin1) && playing(twin2); }, 5s));
  const std::uint16_t admin = zone.admin_port();
  const std::string answer = request(admin, "GET", "/admin/gm/inspect?name=alice");
  REQUIRE(status_of(answer) == 200);
  const nlohmann::json j = json_of(answer);
  CHECK(j.at("entity") == a.welcome().entity_id);
  CHECK(j.at("name") == "alice");
  CHECK(j.at("kind") == "player");
  CHECK(j.at("account") == 0);  // open mode
  CHECK(j.at("properties").at("health").is_number());
  CHECK(j.at("properties").at("max_health").is_number());
  CHECK(j.at("x").is_number());
  CHECK(j.at("party") == 0);
  CHECK(j.at("connection").at("connected_seconds").is_number());
  CHECK(j.at("saved").is_null());  // no character store here
  CHECK(j.at("held") == false);
  CHECK(j.at("muted") == false);
  // An NPC has no connection; a name two players share names nobody.
  const nlohmann::json npc = json_of(request(admin, "GET", "/admin/gm/inspect?id=1"));
  CHECK(npc.at("kind") == "npc");
  CHECK(npc.at("connection").is_null());
  const std::string twins = request(admin, "GET", "/admin/gm/inspect?name=twin");
  CHECK(status_of(twins) == 409);
  CHECK(json_of(twins).at("ids").size() == 2);
  CHECK(metric(admin, "inspect", "ok") == "2");
  CHECK(metric(admin, "inspect", "refused") == "1");
  CHECK(zone.audit_lines().size() == 3);
}

TEST_CASE("gm: inspect shows the state last saved of a character, and whether it is committed") {
  net::EnetLibrary enet;
  const TempDir dir{temp_dir("inspect-saved")};
  config::ZoneConfig cfg = open_zone(dir.path);
  cfg.persist.enabled = true;
  cfg.persist.path = (dir.path / "characters.db").string();
  cfg.persist.checkpoint_seconds = 1;
  LoggedZone zone(cfg);
  test::Clients clients;
  client::Bot& a = clients.add("alice", zone.port());
  REQUIRE(clients.pump_until([&] { return playing(a); }, 5s));
  const std::uint16_t admin = zone.admin_port();
  nlohmann::json j;
  // A checkpoint within a second, committed soon after.
  REQUIRE(clients.pump_until(
      [&] {
        j = json_of(request(admin, "GET", "/admin/gm/inspect?name=alice"));
        return j.at("saved").is_object() && j.at("saved").at("committed") == true;
      },
      20s));
  const nlohmann::json& saved = j.at("saved");
  CHECK(saved.at("type") == "player");
  CHECK(saved.at("x").is_number());
  CHECK(saved.at("properties").at("health").is_number());
  CHECK(saved.at("seconds_ago").get<double>() >= 0.0);
  CHECK(j.at("held") == false);
}

TEST_CASE(
    "gm: the ban list - saved before it changes, read back whole, a failed save changes nothing") {
  const std::filesystem::path dir = temp_dir("banlist");
  const std::string path = (dir / "sub" / "bans.json").string();
  std::string error;
  {
    BanList bans(path);
    CHECK_FALSE(bans.load());  // no file: no bans
    CHECK(bans.ban({.account = 7, .at = 100, .by = "10.0.0.1", .reason = "spam"}, error) ==
          BanList::Change::kDone);
    CHECK(bans.ban({.account = 9, .at = 101, .by = "10.0.0.1", .reason = std::string(500, 'r')},
                   error) == BanList::Change::kDone);
    CHECK(bans.ban({.account = 7, .at = 102, .by = "x", .reason = "again"}, error) ==
          BanList::Change::kUnchanged);
    CHECK(bans.unban(8, error) == BanList::Change::kUnchanged);
    CHECK(bans.unban(9, error) == BanList::Change::kDone);
    CHECK(bans.banned(7));
    CHECK_FALSE(bans.banned(9));
  }
  {
    BanList bans(path);
    REQUIRE_FALSE(bans.load());
    const std::vector<Ban> list = bans.list();
    REQUIRE(list.size() == 1);
    CHECK(list[0].account == 7);
    CHECK(list[0].at == 100);  // the first ban's record
    CHECK(list[0].reason == "spam");
  }
  {
    // A reason is cut to its bound on the way in.
    BanList bans(path);
    REQUIRE_FALSE(bans.load());
    CHECK(bans.ban({.account = 11, .at = 1, .by = "", .reason = std::string(500, 'r')}, error) ==
          BanList::Change::kDone);
    BanList again(path);
    REQUIRE_FALSE(again.load());
    CHECK(again.list().back().reason.size() == BanList::kMaxReasonBytes);
  }
  {
    // Where nothing can be written: refused, and the list in memory unchanged.
    BanList bans("/proc/no-such-dir/bans.json");
    CHECK_FALSE(bans.load());
    CHECK(bans.ban({.account = 5, .at = 1, .by = "", .reason = ""}, error) ==
          BanList::Change::kSaveFailed);
    CHECK_FALSE(error.empty());
    CHECK_FALSE(bans.banned(5));
  }
  {
    // Not a bans file, or an account 0: the start stops.
    std::ofstream(dir / "bad.json") << "{\"version\": 1, \"bans\": [{\"account\": 0}]}";
    BanList zero((dir / "bad.json").string());
    CHECK(zero.load().has_value());
    std::ofstream(dir / "bad.json") << "[1, 2, 3]";
    BanList other((dir / "bad.json").string());
    CHECK(other.load().has_value());
    BanList directory(dir.string());
    CHECK(directory.load().has_value());
  }
  {
    // In memory only: nothing written anywhere.
    BanList memory("");
    CHECK_FALSE(memory.load());
    CHECK(memory.ban({.account = 3, .at = 1, .by = "", .reason = ""}, error) ==
          BanList::Change::kDone);
    CHECK(memory.banned(3));
  }
  std::filesystem::remove_all(dir);
}
