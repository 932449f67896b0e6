#include "zone/ingest.hpp"

#include <algorithm>
#include <ctime>

#include "protocol/codec.hpp"

namespace zone {

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kOversize:
      return "oversize";
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kUnknownMessage:
      return "unknown_message";
    case DropReason::kBeforeHello:
      return "before_hello";
    case DropReason::kDuplicateHello:
      return "duplicate_hello";
    case DropReason::kBadValue:
      return "bad_value";
    case DropReason::kStaleInput:
      return "stale_input";
    case DropReason::kFlood:
      return "flood";
    case DropReason::kBadAck:
      return "bad_ack";
    case DropReason::kOverload:
      return "overload";
  }
  return "unknown";
}

void Ingest::check_ticket(const flatbuffers::Vector<std::uint8_t>* ticket, InboundEvent& out,
                          std::string& name) {
  out.ticket_checked = true;
  out.has_ticket = ticket != nullptr && ticket->size() > 0;
  if (!out.has_ticket) return;
  // ENet hosts have at most 4,095 peers; anything beyond is not a peer to remember.
  constexpr std::uint32_t kMaxPeers = 1 << 16;
  if (out.peer.index < kMaxPeers) {
    if (out.peer.index >= ticket_checked_.size()) ticket_checked_.resize(out.peer.index + 1);
    if (ticket_checked_[out.peer.index]) {
      out.ticket_error = auth::TicketError::kMalformed;  // a duplicate: never let in
      return;
    }
    ticket_checked_[out.peer.index] = true;
  }
  auth::TicketClaims claims;
  // Expiry is Unix time: the login service and the zone share the wall clock.
  const auto now = static_cast<std::uint64_t>(std::time(nullptr));
  out.ticket_error = verifier_->verify({ticket->data(), ticket->size()}, now, claims);
  if (out.ticket_error != auth::TicketError::kNone) return;
  out.account_id = claims.account_id;
  out.character_id = claims.character_id;
  name = std::move(claims.name);
}

void Ingest::on_event(const net::NetEvent& ev) {
  InboundEvent out;
  out.peer = ev.peer;
  out.at = std::chrono::steady_clock::now();
  std::string_view name;
  std::string ticket_name;
  std::string_view token;
  switch (ev.type) {
    case net::NetEvent::Type::kConnect:
      out.kind = InboundEvent::Kind::kConnect;
      if (ev.peer.index < ticket_checked_.size()) ticket_checked_[ev.peer.index] = false;
      break;
    case net::NetEvent::Type::kDisconnect:
      out.kind = InboundEvent::Kind::kDisconnect;
      out.data = ev.data;
      break;
    case net::NetEvent::Type::kReceive: {
      auto bad = [&](DropReason why) {
        out.kind = InboundEvent::Kind::kBad;
        out.data = static_cast<std::uint32_t>(why);
      };
      if (ev.bytes.size() > limits_.max_packet_bytes) {
        bad(DropReason::kOversize);
      } else if (ev.channel == protocol::kUnreliableChannel) {
        if (protocol::decode_input(ev.bytes, out.input)) {
          out.kind = InboundEvent::Kind::kInput;
        } else {
          bad(DropReason::kMalformed);
        }
      } else if (ev.channel == protocol::kReliableChannel) {
        protocol::ParseError why = protocol::ParseError::kNone;
        const protocol::ClientPacket* p = protocol::parse_client_packet(ev.bytes, &why);
        const protocol::Hello* hello = p ? p->message_as_Hello() : nullptr;
        const protocol::JoinParty* join = p ? p->message_as_JoinParty() : nullptr;
        const protocol::JoinGuild* guild = p ? p->message_as_JoinGuild() : nullptr;
        const protocol::Action* action = p ? p->message_as_Action() : nullptr;
        const protocol::Chat* chat = p ? p->message_as_Chat() : nullptr;
        if (hello != nullptr) {
          out.kind = InboundEvent::Kind::kHello;
          out.data = hello->protocol_version();
          if (hello->player_name() != nullptr) name = hello->player_name()->string_view();
          if (verifier_ != nullptr) {
            check_ticket(hello->ticket(), out, ticket_name);
            if (out.has_ticket && out.ticket_error == auth::TicketError::kNone) name = ticket_name;
          }
          // An empty token is no token: a new player's hello.
          if (const auto* t = hello->transfer_token(); t != nullptr && t->size() > 0) {
            token = {reinterpret_cast<const char*>(t->data()), t->size()};
            out.has_token = true;
          }
          if (const auto* t = hello->resume_token(); t != nullptr && t->size() > 0) {
            if (!out.has_token) token = {reinterpret_cast<const char*>(t->data()), t->size()};
            out.has_resume = true;
          }
        } else if (join != nullptr) {
          out.kind = InboundEvent::Kind::kJoinParty;
          out.group_key = join->key();
        } else if (guild != nullptr) {
          out.kind = InboundEvent::Kind::kJoinGuild;
          out.group_key = guild->key();
        } else if (action != nullptr) {
          out.kind = InboundEvent::Kind::kAction;
          out.action_sequence = action->sequence();
          out.action = action->action();
          out.target = action->target();
          if (const auto* args = action->args()) {
            out.too_many_args = args->size() > protocol::kMaxArgs;
            out.arg_count =
                static_cast<std::uint8_t>(std::min<std::size_t>(args->size(), protocol::kMaxArgs));
            for (std::size_t i = 0; i < out.arg_count; ++i)
              out.args[i] = args->Get(static_cast<flatbuffers::uoffset_t>(i));
          }
        } else if (chat != nullptr) {
          out.kind = InboundEvent::Kind::kChat;
          out.chat_channel = chat->channel();
          if (chat->text() != nullptr) name = chat->text()->string_view();
          if (chat->to() != nullptr) token = chat->to()->string_view();
        } else {
          bad(why == protocol::ParseError::kUnknownMessage ? DropReason::kUnknownMessage
                                                           : DropReason::kMalformed);
        }
      } else {
        bad(DropReason::kMalformed);  // a channel the protocol does not use
      }
      break;
    }
  }
  out.name_at = static_cast<std::uint32_t>(staged_.text.size());
  out.name_size = static_cast<std::uint32_t>(name.size());
  out.token_size = static_cast<std::uint32_t>(token.size());
  staged_.text.append(name);
  staged_.text.append(token);
  staged_.events.push_back(out);
}

void Ingest::publish() {
  if (staged_.events.empty() && staged_.overflowed == 0) return;
  std::lock_guard lock(mutex_);
  const auto offset = static_cast<std::uint32_t>(queue_.text.size());
  queue_.text.append(staged_.text);
  queue_.overflowed += staged_.overflowed;
  for (InboundEvent& e : staged_.events) {
    const bool session_event =
        e.kind == InboundEvent::Kind::kConnect || e.kind == InboundEvent::Kind::kDisconnect;
    if (!session_event && queue_.events.size() >= limits_.max_events) {
      // Counted, but not charged to the client: the zone is the one falling behind.
      if (queue_.events.size() >= limits_.max_events * 2) {
        ++queue_.overflowed;
        continue;
      }
      e.kind = InboundEvent::Kind::kBad;
      e.data = static_cast<std::uint32_t>(DropReason::kOverload);
    }
    e.name_at += offset;
    queue_.events.push_back(e);
  }
  staged_.clear();
}

void Ingest::take(Inbox& into) {
  into.clear();
  std::lock_guard lock(mutex_);
  std::swap(into, queue_);
}

}  // namespace zone
