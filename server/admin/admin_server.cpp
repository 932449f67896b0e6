#include "admin/admin_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

#include "admin/admin_access.hpp"

namespace zone::admin {

namespace {

using Clock = std::chrono::steady_clock;

// After a response that ends the connection, what the client still sends is read and
// discarded for a moment (up to this much) before the socket is closed, so that closing
// with unread data (an RST) cannot destroy the response before the client reads it.
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr std::size_t kLingerBytes = 1 << 20;
// Responses are sent in pieces of at most this much.
constexpr std::size_t kFlushBytes = 64 * 1024;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::optional<std::uint64_t> parse_length(std::string_view text) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

int milliseconds_until(Clock::time_point deadline, Clock::time_point now) {
  if (deadline <= now) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
  return static_cast<int>(std::min<std::int64_t>(ms, 60'000));
}

// Where a request ends in what a connection has received: enough of HTTP/1.1's framing
// to know when a request is complete. cpp-httplib parses the request itself afterwards;
// if it ever disagrees, it sees the end of its input, never the socket.
struct Framing {
  enum class State : std::uint8_t { kIncomplete, kComplete, kBad, kHeadTooLarge };
  State state = State::kIncomplete;
  std::size_t head_bytes = 0;     // request line and headers with the blank line; 0: not yet
  std::size_t request_bytes = 0;  // what the handler gets: the head, and the body if it is read
  bool body_refused = false;      // too large or chunked: answered unread, then the end
  bool expect_continue = false;
};

Framing frame_request(std::string_view in, const Limits& limits) {
  Framing f;
  const std::size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos || end + 4 > limits.max_head_bytes) {
    if (in.size() > limits.max_head_bytes) f.state = Framing::State::kHeadTooLarge;
    return f;
  }
  f.head_bytes = end + 4;
  std::optional<std::uint64_t> length;
  bool transfer_encoding = false;
  const std::string_view head = in.substr(0, end);
  std::size_t pos = head.find("\r\n");  // the request line is skipped
  while (pos != std::string_view::npos) {
    pos += 2;
    const std::size_t next = head.find("\r\n", pos);
    const std::string_view line =
        head.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    pos = next;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "content-length")) {
      const auto v = parse_length(value);
      if (!v || (length && *length != *v)) {
        f.state = Framing::State::kBad;
        return f;
      }
      length = v;
    } else if (iequals(name, "transfer-encoding")) {
      transfer_encoding = true;
    } else if (iequals(name, "expect") && iequals(value, "100-continue")) {
      f.expect_continue = true;
    }
  }
  if (transfer_encoding || (length && *length > limits.max_body_bytes)) {
    f.body_refused = true;
    f.request_bytes = f.head_bytes;
    f.state = Framing::State::kComplete;
    return f;
  }
  f.request_bytes = f.head_bytes + static_cast<std::size_t>(length.value_or(0));
  f.state = in.size() >= f.request_bytes ? Framing::State::kComplete : Framing::State::kIncomplete;
  return f;
}

// What cpp-httplib reads and writes for one request: the request comes from memory, the
// response goes to the socket, buffered, within a deadline, and abandoned at once when
// the server stops.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(int fd, std::string_view request, Clock::time_point deadline, int stop_fd)
      : fd_(fd), request_(request), deadline_(deadline), stop_fd_(stop_fd) {}

  using httplib::Stream::write;

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override { return !failed_; }
  ssize_t read(char* ptr, size_t size) override {
    const std::size_t n = std::min(size, request_.size() - pos_);
    std::memcpy(ptr, request_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (failed_) return -1;
    out_.append(ptr, size);
    if (out_.size() >= kFlushBytes && !flush()) return -1;
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  socket_t socket() const override { return fd_; }

  // Sends what is buffered; false if the client did not take it in time, or on stop.
  bool flush() {
    std::size_t sent = 0;
    while (!failed_ && sent < out_.size()) {
      const ssize_t n =
          ::send(fd_, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        std::array<pollfd, 2> fds{{{fd_, POLLOUT, 0}, {stop_fd_, POLLIN, 0}}};
        const int r = ::poll(fds.data(), fds.size(), milliseconds_until(deadline_, Clock::now()));
        if (r < 0 && errno == EINTR) continue;
        if (r > 0 && fds[1].revents == 0) continue;
      }
      failed_ = true;  // an error, the deadline, or stop()
    }
    out_.clear();
    return !failed_;
  }
  std::size_t consumed() const { return pos_; }
  bool failed() const { return failed_; }

 private:
  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    port = -1;
    if (get(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, text.data(), text.size());
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, text.data(), text.size());
      port = ntohs(a->sin6_port);
    }
    ip = text.data();
  }

  int fd_;
  std::string_view request_;
  std::size_t pos_ = 0;
  std::string out_;
  Clock::time_point deadline_;
  int stop_fd_;
  bool failed_ = false;
};

// The poller's own answers (the rest come from cpp-httplib).
std::string canned_response(int status, std::string_view text) {
  const char* reason = status == 408   ? "Request Timeout"
                       : status == 431 ? "Request Header Fields Too Large"
                                       : "Bad Request";
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      status, reason, text.size(), text);
}

}  // namespace

class AdminServer::Impl final : public httplib::Server {
 public:
  Impl(int listen_fd, Security security, Limits limits)
      : security_(std::move(security)), limits_(limits), listen_fd_(listen_fd) {
    if (security_.token.empty()) throw std::invalid_argument("the admin token must not be empty");
    if (limits_.workers == 0) limits_.workers = 1;
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0 || stop_fd_ < 0) {
      const int error = errno;
      listen_fd_ = -1;  // still the caller's to close
      close_fds();
      errno = error;
      throw std::runtime_error(fmt::format("admin HTTP: eventfd: {}", std::strerror(errno)));
    }
    set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return check(req, res); });
    set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      res.status = 500;
      res.set_content("internal error\n", "text/plain");
    });
    set_payload_max_length(limits_.max_body_bytes);  // a second line of defence
    set_keep_alive_timeout(
        std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout).count());
    set_keep_alive_max_count(1000);  // advertised only: connections are not counted
    set_default_headers({
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-store"},
    });
  }
  ~Impl() override {
    stop();
    close_fds();
  }

  void add_get(const std::string& pattern, Access access, Handler handler) {
    get_access_.emplace_back(std::regex(pattern), access);
    Get(pattern, std::move(handler));
  }
  void add_post(const std::string& pattern, Handler handler) { Post(pattern, std::move(handler)); }

  void start() {
    poller_ = std::thread([this] { poll_loop(); });
    for (std::size_t i = 0; i < limits_.workers; ++i) {
      workers_.emplace_back([this] { worker_loop(); });
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    const std::uint64_t one = 1;
    // Wakes the poller and aborts every response being written; never read, so it stays
    // signalled.
    [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof(one));
    work_ready_.notify_all();
    if (poller_.joinable()) poller_.join();
    // The port is free as soon as stop() returns (a restart can bind it again).
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    std::lock_guard lock(mutex_);
    ready_.clear();
    returned_.clear();
  }

 private:
  enum class Next : std::uint8_t { kKeepAlive, kLinger, kClose };
  struct Conn {
    int fd = -1;
    std::uint64_t serial = 0;  // accept order: the oldest is closed first when full
    std::string in;            // received and not yet handled
    Clock::time_point deadline;
    bool receiving = false;  // part of a request is here: the request deadline applies
    bool continued = false;  // "100 Continue" sent for the current request
    bool lingering = false;
    std::size_t discarded = 0;
    // The client's address: handlers see it as Request::remote_addr (the GM commands'
    // audit lines name their caller).
    std::string remote_addr;
    int remote_port = 0;
    Next next = Next::kKeepAlive;  // set by the worker
    Conn() = default;
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    ~Conn() {
      if (fd >= 0) ::close(fd);
    }
  };
  using ConnPtr = std::unique_ptr<Conn>;

  void close_fds() {
    for (int* fd : {&listen_fd_, &wake_fd_, &stop_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  // ---- Access control, before any handler runs and before a body is read. ------------

  HandlerResponse check(const httplib::Request& req, httplib::Response& res) const {
    const auto refuse = [&res](int status, std::string text) {
      res.status = status;
      res.set_content(std::move(text), "text/plain; charset=utf-8");
      return HandlerResponse::Handled;
    };
    // DNS rebinding: a hostile page reaches this port under a name of its own.
    const std::size_t hosts = req.get_header_value_count("Host");
    const std::string host = req.get_header_value("Host");
    if (hosts > 1) return refuse(400, "more than one Host header\n");
    if (hosts == 1 && !host_allowed(host, security_.allowed_hosts)) {
      return refuse(421,
                    "this server does not answer to that Host name; add it to "
                    "admin.allowed_hosts if it is really this server\n");
    }
    // Bodies: small, plain, and never read when refused.
    if (req.has_header("Transfer-Encoding")) {
      return refuse(501, "Transfer-Encoding is not supported: send a Content-Length\n");
    }
    if (req.has_header("Content-Length")) {
      const auto length = parse_length(trim(req.get_header_value("Content-Length")));
      if (!length) return refuse(400, "malformed Content-Length\n");
      if (*length > limits_.max_body_bytes) {
        return refuse(
            413, fmt::format("request bodies are limited to {} bytes\n", limits_.max_body_bytes));
      }
    }
    if (req.has_header("Content-Encoding") &&
        !iequals(trim(req.get_header_value("Content-Encoding")), "identity")) {
      return refuse(415, "compressed request bodies are not accepted\n");
    }
    // One range is cheap; many would multiply the answer (the parts are never built:
    // the worker drops the parsed ranges before routing).
    if (req.get_header_value("Range").find(',') != std::string::npos) {
      return refuse(416, "multiple ranges are not supported\n");
    }
    const bool safe = req.method == "GET" || req.method == "HEAD";
    // Cross-site request forgery: a page elsewhere can make the browser send a POST.
    if (!safe) {
      // get_header_value returns copies: keep them alive while comparing.
      const auto header = [&req](const char* name) -> std::optional<std::string> {
        if (!req.has_header(name)) return std::nullopt;
        return req.get_header_value(name);
      };
      const auto view = [](const std::optional<std::string>& s) {
        return s ? std::optional<std::string_view>(*s) : std::nullopt;
      };
      const auto origin = header("Origin");
      const auto site = header("Sec-Fetch-Site");
      if (!same_origin(view(origin), view(site), host)) {
        return refuse(403, "cross-origin requests may not change anything here\n");
      }
    }
    if (!safe || access_of(req.path) == Access::kToken) {
      const std::string authorization = req.get_header_value("Authorization");
      const auto given = bearer_token(authorization);
      if (!given || !token_equals(*given, security_.token)) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"zone admin\"");
        return refuse(401,
                      "this endpoint needs the admin token: send \"Authorization: Bearer "
                      "<token>\" (see docs/security.md)\n");
      }
    }
    return HandlerResponse::Unhandled;
  }

  Access access_of(const std::string& path) const {
    for (const auto& [pattern, access] : get_access_) {
      if (std::regex_match(path, pattern)) return access;
    }
    return Access::kToken;
  }

  // ---- The poller: accepts, reads requests whole, enforces the deadlines. -------------

  void poll_loop() {
    std::vector<pollfd> fds;
    std::array<char, 16 * 1024> buf{};
    for (;;) {
      take_returned();
      const auto now = Clock::now();
      expire(now);
      fds.clear();
      fds.push_back({listen_fd_, POLLIN, 0});
      fds.push_back({wake_fd_, POLLIN, 0});
      fds.push_back({stop_fd_, POLLIN, 0});
      int timeout = -1;
      for (const ConnPtr& c : conns_) {
        fds.push_back({c->fd, POLLIN, 0});
        const int ms = milliseconds_until(c->deadline, now);
        timeout = timeout < 0 ? ms : std::min(timeout, ms);
      }
      const int r = ::poll(fds.data(), fds.size(), timeout);
      if (r < 0 && errno != EINTR) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // ENOMEM: try again
        continue;
      }
      if (r <= 0) continue;
      if (fds[2].revents != 0) break;
      if (fds[1].revents != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof(count));
      }
      const std::size_t existing = conns_.size();
      for (std::size_t i = 0; i < existing; ++i) {
        if (fds[i + 3].revents != 0) on_readable(conns_[i], buf);
      }
      std::erase(conns_, nullptr);
      if (fds[0].revents != 0) accept_some();
    }
    conns_.clear();
  }

  void accept_some() {
    for (int i = 0; i < 64; ++i) {
      sockaddr_in peer{};
      socklen_t peer_len = sizeof(peer);
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          if (close_oldest()) continue;
          // Out of descriptors and every connection is with a worker: the listening
          // socket stays readable, so pause rather than spin until one comes back.
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return;  // EAGAIN: nothing more waiting
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->serial = ++serial_;
      if (peer.sin_family == AF_INET) {
        char text[INET_ADDRSTRLEN] = {};
        if (::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof(text)) != nullptr)
          c->remote_addr = text;
        c->remote_port = ntohs(peer.sin_port);
      }
      c->deadline = Clock::now() + limits_.idle_timeout;
      if (conns_.size() + busy_.load() >= limits_.max_connections && !close_oldest()) {
        continue;  // every slot is running a handler: this one is closed (by ~Conn)
      }
      conns_.push_back(std::move(c));
    }
  }

  // Makes room by closing the connection that has waited longest; false if none waits.
  bool close_oldest() {
    auto oldest = std::min_element(conns_.begin(), conns_.end(), [](const auto& a, const auto& b) {
      return a->serial < b->serial;
    });
    if (oldest == conns_.end()) return false;
    conns_.erase(oldest);
    return true;
  }

  void on_readable(ConnPtr& c, std::array<char, 16 * 1024>& buf) {
    const ssize_t n = ::recv(c->fd, buf.data(), buf.size(), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      c.reset();  // closed by the client, or an error
      return;
    }
    if (c->lingering) {
      c->discarded += static_cast<std::size_t>(n);
      if (c->discarded > kLingerBytes) c.reset();
      return;
    }
    c->in.append(buf.data(), static_cast<std::size_t>(n));
    advance(c);
  }

  // Decides what a connection waits for next, or hands a complete request to a worker.
  void advance(ConnPtr& c) {
    const auto now = Clock::now();
    if (c->in.empty()) {
      c->receiving = false;
      c->deadline = now + limits_.idle_timeout;
      return;
    }
    if (!c->receiving) {
      c->receiving = true;
      c->continued = false;
      c->deadline = now + limits_.request_timeout;
    }
    const Framing f = frame_request(c->in, limits_);
    switch (f.state) {
      case Framing::State::kComplete: {
        std::lock_guard lock(mutex_);
        ready_.push_back(std::move(c));
        ++busy_;
        work_ready_.notify_one();
        return;
      }
      case Framing::State::kBad:
        return reply_and_linger(*c, 400, "malformed Content-Length\n");
      case Framing::State::kHeadTooLarge:
        return reply_and_linger(
            *c, 431,
            fmt::format("request headers are limited to {} bytes\n", limits_.max_head_bytes));
      case Framing::State::kIncomplete:
        // The body is wanted: say so to a client that waits to be asked (curl does).
        if (f.expect_continue && !c->continued && f.head_bytes > 0) {
          constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
          [[maybe_unused]] const ssize_t sent =
              ::send(c->fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          c->continued = true;
        }
        return;
    }
  }

  // A short answer from the poller itself (it fits any socket buffer), then the end.
  void reply_and_linger(Conn& c, int status, std::string_view text) {
    const std::string response = canned_response(status, text);
    [[maybe_unused]] const ssize_t sent =
        ::send(c.fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    linger(c);
  }

  void linger(Conn& c) {
    ::shutdown(c.fd, SHUT_WR);
    c.lingering = true;
    c.in.clear();
    c.deadline = Clock::now() + kLingerTime;
  }

  void expire(Clock::time_point now) {
    for (ConnPtr& c : conns_) {
      if (c->deadline > now) continue;
      if (c->receiving && !c->lingering) {
        reply_and_linger(*c, 408,
                         fmt::format("the request did not arrive within {} ms\n",
                                     limits_.request_timeout.count()));
      } else {
        c.reset();  // idle too long, or done lingering
      }
    }
    std::erase(conns_, nullptr);
  }

  void take_returned() {
    std::vector<ConnPtr> back;
    {
      std::lock_guard lock(mutex_);
      back.swap(returned_);
    }
    for (ConnPtr& c : back) {
      switch (c->next) {
        case Next::kClose:
          continue;
        case Next::kLinger:
          linger(*c);
          break;
        case Next::kKeepAlive:
          c->receiving = false;
          advance(c);  // a pipelined request may be here already
          if (!c) continue;
          break;
      }
      conns_.push_back(std::move(c));
    }
  }

  // ---- Workers: one complete request at a time. --------------------------------------

  void worker_loop() {
    for (;;) {
      ConnPtr c;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
        if (stopping_) return;
        c = std::move(ready_.front());
        ready_.pop_front();
      }
      serve(*c);
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;  // ~Conn closes it
        returned_.push_back(std::move(c));
        --busy_;
      }
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    }
  }

  void serve(Conn& c) {
    const Framing f = frame_request(c.in, limits_);
    RequestStream stream(c.fd, std::string_view(c.in).substr(0, f.request_bytes),
                         Clock::now() + limits_.write_timeout, stop_fd_);
    bool closed = false;
    const bool close_after = f.body_refused;
    bool ok = process_request(stream, close_after, closed, [&c](httplib::Request& req) {
      req.remote_addr = c.remote_addr;
      req.remote_port = c.remote_port;
      // Several ranges are refused by check(): never let cpp-httplib build their parts.
      if (req.ranges.size() > 1) req.ranges.clear();
      // The body is here already (or refused): cpp-httplib must not ask for it again.
      req.headers.erase("Expect");
    });
    ok = stream.flush() && ok;
    c.in.erase(0, std::max(stream.consumed(), f.request_bytes));
    if (!ok) {
      c.next = Next::kClose;
    } else if (closed || close_after) {
      c.next = Next::kLinger;
    } else {
      c.next = Next::kKeepAlive;
    }
  }

  Security security_;
  Limits limits_;
  std::vector<std::pair<std::regex, Access>> get_access_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // workers -> poller: connections returned
  int stop_fd_ = -1;  // stop() -> everyone
  std::thread poller_;
  std::vector<std::thread> workers_;
  std::vector<ConnPtr> conns_;  // poller only: waiting for (the rest of) a request
  std::uint64_t serial_ = 0;    // poller only
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<ConnPtr> ready_;         // complete requests for the workers
  std::vector<ConnPtr> returned_;     // served, back to the poller
  std::atomic<std::size_t> busy_{0};  // in ready_ or with a worker
  bool stopping_ = false;             // under mutex_
};

namespace {

int bind_listen(const std::string& bind_address, std::uint16_t port, int backlog,
                std::uint16_t& bound_port) {
  const auto fail = [&](const char* what, int fd) -> int {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(
        fmt::format("cannot bind admin HTTP {}:{} ({}: {})", bind_address, port, what, why));
  };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, bind_address.c_str(), &addr.sin_addr) != 1) {
    throw std::runtime_error(
        fmt::format("cannot bind admin HTTP {}:{} (not an IPv4 address)", bind_address, port));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket", fd);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail("bind", fd);
  }
  // cpp-httplib's own listen() uses a backlog of 5, which leaves bursts of connections
  // waiting for SYN retransmissions (seconds): one reason this class owns the socket.
  if (::listen(fd, backlog) != 0) return fail("listen", fd);
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return fail("getsockname", fd);
  }
  bound_port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

AdminServer::AdminServer(const std::string& bind_address, std::uint16_t port, Security security,
                         Limits limits) {
  const int fd = bind_listen(bind_address, port, limits.backlog, port_);
  try {
    impl_ = std::make_unique<Impl>(fd, std::move(security), limits);
  } catch (...) {
    ::close(fd);
    throw;
  }
}

AdminServer::~AdminServer() {
  stop();
}

void AdminServer::get(const std::string& pattern, Access access, Handler handler) {
  impl_->add_get(pattern, access, std::move(handler));
}

void AdminServer::post(const std::string& pattern, Handler handler) {
  impl_->add_post(pattern, std::move(handler));
}

void AdminServer::start() {
  impl_->start();
}

void AdminServer::stop() {
  if (impl_) impl_->stop();
}

}  // namespace zone::admin
