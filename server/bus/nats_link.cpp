#include "bus/nats_link.hpp"

#include <nats/nats.h>

#include <condition_variable>
#include <deque>
#include <mutex>

namespace zone::bus {

// What NATS's threads share with the link: the queue, the counters, and the signals that
// the library has finished calling back. Callbacks get a raw pointer to it.
struct NatsLink::Shared {
  std::mutex mutex;
  std::condition_variable done;
  std::deque<BusMessage> queue;  // under mutex
  std::size_t max_queued = 0;
  int open_subscriptions = 0;  // under mutex: onComplete not yet called
  bool closed = false;         // under mutex: the connection's closed callback ran
  std::atomic<bool> connected{false};
  std::atomic<std::uint64_t> published{0}, publish_failed{0}, bytes_out{0}, received{0},
      bytes_in{0}, dropped{0}, disconnects{0}, reconnects{0}, errors{0};
};

struct NatsLink::Handles {
  natsOptions* options = nullptr;
  natsConnection* connection = nullptr;
  std::vector<natsSubscription*> subscriptions;
};

namespace {

std::string status_text(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return std::string(natsStatus_GetText(s)) +
         (last != nullptr && *last ? ": " + std::string(last) : "");
}

void check(natsStatus s, const char* what) {
  if (s != NATS_OK) throw BusError(std::string(what) + ": " + status_text(s));
}

}  // namespace

extern "C" {
static void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* shared = static_cast<NatsLink::Shared*>(closure);
  BusMessage m;
  m.subject = natsMsg_GetSubject(msg);
  const auto* data = reinterpret_cast<const std::uint8_t*>(natsMsg_GetData(msg));
  m.data.assign(data, data + natsMsg_GetDataLength(msg));
  natsMsg_Destroy(msg);
  const std::size_t bytes = m.data.size();
  {
    std::lock_guard lock(shared->mutex);
    if (shared->queue.size() >= shared->max_queued) {
      ++shared->dropped;
      return;
    }
    shared->queue.push_back(std::move(m));
  }
  ++shared->received;
  shared->bytes_in += bytes;
}

static void on_connected(natsConnection*, void* closure) {
  static_cast<NatsLink::Shared*>(closure)->connected = true;
}

static void on_disconnected(natsConnection*, void* closure) {
  auto* shared = static_cast<NatsLink::Shared*>(closure);
  if (shared->connected.exchange(false)) ++shared->disconnects;
}

static void on_reconnected(natsConnection*, void* closure) {
  auto* shared = static_cast<NatsLink::Shared*>(closure);
  shared->connected = true;
  ++shared->reconnects;
}

static void on_error(natsConnection*, natsSubscription*, natsStatus, void* closure) {
  ++static_cast<NatsLink::Shared*>(closure)->errors;
}

static void on_closed(natsConnection*, void* closure) {
  auto* shared = static_cast<NatsLink::Shared*>(closure);
  shared->connected = false;
  std::lock_guard lock(shared->mutex);
  shared->closed = true;
  shared->done.notify_all();
}

static void on_subscription_complete(void* closure) {
  auto* shared = static_cast<NatsLink::Shared*>(closure);
  std::lock_guard lock(shared->mutex);
  --shared->open_subscriptions;
  shared->done.notify_all();
}
}

NatsLink::NatsLink(const LinkOptions& o) : shared_(new Shared), handles_(new Handles) {
  shared_->max_queued = o.max_queued;
  try {
    check(natsOptions_Create(&handles_->options), "NATS options");
    natsOptions* opts = handles_->options;
    check(natsOptions_SetURL(opts, o.url.c_str()), "NATS URL");
    check(natsOptions_SetName(opts, o.name.c_str()), "NATS client name");
    check(natsOptions_SetAllowReconnect(opts, true), "NATS reconnect");
    check(natsOptions_SetMaxReconnect(opts, -1), "NATS reconnect attempts");  // forever
    check(natsOptions_SetReconnectWait(opts, o.reconnect_wait.count()), "NATS reconnect wait");
    check(natsOptions_SetReconnectBufSize(opts, o.reconnect_buffer_bytes), "NATS buffer");
    check(natsOptions_SetDisconnectedCB(opts, on_disconnected, shared_), "NATS callback");
    check(natsOptions_SetReconnectedCB(opts, on_reconnected, shared_), "NATS callback");
    check(natsOptions_SetClosedCB(opts, on_closed, shared_), "NATS callback");
    check(natsOptions_SetErrorHandler(opts, on_error, shared_), "NATS callback");
    if (!o.user.empty()) {
      check(natsOptions_SetUserInfo(opts, o.user.c_str(), o.password.c_str()), "NATS user");
    }
    if (o.tls || o.url.rfind("tls://", 0) == 0) {
      check(natsOptions_SetSecure(opts, true), "NATS TLS");
      if (!o.ca_file.empty()) {
        check(natsOptions_LoadCATrustedCertificates(opts, o.ca_file.c_str()),
              ("NATS CA certificate " + o.ca_file).c_str());
      }
      if (!o.cert_file.empty()) {
        check(natsOptions_LoadCertificatesChain(opts, o.cert_file.c_str(), o.key_file.c_str()),
              ("NATS client certificate " + o.cert_file).c_str());
      }
      // The server's certificate must name the host the URL names.
      const std::size_t scheme = o.url.find("://");
      std::string host = o.url.substr(scheme == std::string::npos ? 0 : scheme + 3);
      host = host.substr(0, host.find(':'));
      check(natsOptions_SetExpectedHostname(opts, host.c_str()), "NATS TLS host name");
    }
    check(natsOptions_SetRetryOnFailedConnect(opts, true, on_connected, shared_),
          "NATS connect retry");
    const natsStatus s = natsConnection_Connect(&handles_->connection, opts);
    if (s == NATS_OK) {
      shared_->connected = true;
    } else if (s != NATS_NOT_YET_CONNECTED) {
      check(s, ("NATS connect to " + o.url).c_str());
    }
  } catch (...) {
    if (handles_->connection != nullptr) natsConnection_Destroy(handles_->connection);
    if (handles_->options != nullptr) natsOptions_Destroy(handles_->options);
    delete shared_;
    throw;
  }
}

NatsLink::~NatsLink() {
  // The library calls back on its own threads until it has said it is done: the closed
  // callback for the connection, onComplete for each subscription. Wait for those
  // (bounded) before freeing what the callbacks use; if they never come, leak the
  // shared state rather than risk a callback writing into freed memory.
  for (natsSubscription* sub : handles_->subscriptions) natsSubscription_Unsubscribe(sub);
  natsConnection_Close(handles_->connection);
  bool finished = false;
  {
    std::unique_lock lock(shared_->mutex);
    finished = shared_->done.wait_for(lock, std::chrono::seconds(5), [this] {
      return shared_->closed && shared_->open_subscriptions <= 0;
    });
  }
  for (natsSubscription* sub : handles_->subscriptions) natsSubscription_Destroy(sub);
  natsConnection_Destroy(handles_->connection);
  natsOptions_Destroy(handles_->options);
  if (finished) delete shared_;
}

void NatsLink::subscribe(const std::string& subject) {
  natsSubscription* sub = nullptr;
  check(natsConnection_Subscribe(&sub, handles_->connection, subject.c_str(), on_message, shared_),
        ("NATS subscribe to " + subject).c_str());
  handles_->subscriptions.push_back(sub);
  {
    std::lock_guard lock(shared_->mutex);
    ++shared_->open_subscriptions;
  }
  check(natsSubscription_SetOnCompleteCB(sub, on_subscription_complete, shared_),
        "NATS subscription callback");
}

bool NatsLink::publish(const std::string& subject, std::span<const std::uint8_t> data) {
  const natsStatus s = natsConnection_Publish(handles_->connection, subject.c_str(), data.data(),
                                              static_cast<int>(data.size()));
  if (s != NATS_OK) {
    ++shared_->publish_failed;
    return false;
  }
  ++shared_->published;
  shared_->bytes_out += data.size();
  return true;
}

void NatsLink::take(std::vector<BusMessage>& out) {
  out.clear();
  std::lock_guard lock(shared_->mutex);
  while (!shared_->queue.empty()) {
    out.push_back(std::move(shared_->queue.front()));
    shared_->queue.pop_front();
  }
}

bool NatsLink::connected() const {
  return shared_->connected.load();
}

LinkStats NatsLink::stats() const {
  LinkStats s;
  s.connected = shared_->connected.load();
  s.published = shared_->published.load();
  s.publish_failed = shared_->publish_failed.load();
  s.bytes_out = shared_->bytes_out.load();
  s.received = shared_->received.load();
  s.bytes_in = shared_->bytes_in.load();
  s.dropped = shared_->dropped.load();
  s.disconnects = shared_->disconnects.load();
  s.reconnects = shared_->reconnects.load();
  s.errors = shared_->errors.load();
  return s;
}

}  // namespace zone::bus
