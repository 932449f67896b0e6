/* Two players through zoneclient.h alone against a real zone (see c_abi_play.h). Every
 * wait is on progress, with a generous deadline: nothing here measures speed. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include "c_abi_play.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "zoneclient.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(void) {
  struct timespec ts = {0, 5 * 1000000L};
  nanosleep(&ts, NULL);
}

/* What one client has seen, from its events. */
typedef struct seen {
  int welcomed;
  int chat_lines;     /* chat events with the expected text */
  uint32_t chat_from; /* the speaker of the last one */
  char chat_name[64];
  int party_joined; /* a PartyStatus Joined or Changed */
  uint32_t party_members;
  int action_answered;
  uint32_t action_sequence, action_status;
  int disconnected;
  uint32_t reason;
} seen;

static void drain(zc_client* c, seen* s) {
  zc_event e;
  while (zc_poll_event(c, &e)) {
    switch (e.type) {
      case ZC_EVENT_WELCOME:
        s->welcomed = 1;
        break;
      case ZC_EVENT_GAME:
        if (e.kind == 0 && strcmp(e.text, "hello from C") == 0) {
          ++s->chat_lines;
          s->chat_from = e.entity;
          snprintf(s->chat_name, sizeof s->chat_name, "%s", e.name);
        }
        break;
      case ZC_EVENT_PARTY:
        if (e.status == 0 || e.status == 4) {
          s->party_joined = 1;
          s->party_members = e.count;
        }
        break;
      case ZC_EVENT_ACTION_RESULT:
        s->action_answered = 1;
        s->action_sequence = e.sequence;
        s->action_status = e.status;
        break;
      case ZC_EVENT_DISCONNECTED:
        s->disconnected = 1;
        s->reason = e.reason;
        break;
      default:
        break;
    }
  }
}

typedef int (*condition)(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg);

/* Runs both clients until `done` holds or `seconds` pass; 1 when it held. */
static int run_until(zc_client* a, zc_client* b, seen* sa, seen* sb, condition done, void* arg,
                     double seconds) {
  const double deadline = now_seconds() + seconds;
  while (now_seconds() < deadline) {
    zc_update(a, now_seconds());
    zc_update(b, now_seconds());
    drain(a, sa);
    drain(b, sb);
    if (sa->disconnected || sb->disconnected) return 0;
    if (done(a, b, sa, sb, arg)) return 1;
    nap();
  }
  return 0;
}

static int both_have_frames(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  zc_player pa, pb;
  (void)arg;
  return sa->welcomed && sb->welcomed && zc_get_player(a, &pa) && zc_get_player(b, &pb);
}

static int sees(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  zc_player pb;
  zc_entity e;
  (void)sa;
  (void)sb;
  (void)arg;
  return zc_get_player(b, &pb) && zc_entity_find(a, pb.entity_id, &e);
}

typedef struct walk_goal {
  double start_x, start_y;
  double metres;
} walk_goal;

static int walked(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  const walk_goal* g = (const walk_goal*)arg;
  zc_player pa;
  (void)b;
  (void)sa;
  (void)sb;
  if (!zc_get_player(a, &pa)) return 0;
  return hypot(pa.server_x - g->start_x, pa.server_y - g->start_y) >= g->metres;
}

static int both_chatted(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  (void)a;
  (void)b;
  (void)arg;
  return sa->chat_lines > 0 && sb->chat_lines > 0;
}

static int grouped(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  (void)a;
  (void)b;
  (void)arg;
  return sa->party_joined && sb->party_joined && sa->party_members == 2 && sa->action_answered;
}

static int fail(char* why, size_t n, const char* what) {
  snprintf(why, n, "%s", what);
  return 1;
}

int zc_test_play(const char* host, uint16_t port, char* why, size_t why_size, char* report,
                 size_t report_size) {
  zc_options oa, ob;
  zc_options_init(&oa);
  zc_options_init(&ob);
  oa.player_name = "c-alice";
  ob.player_name = "c-bob";
  zc_client* a = zc_create(&oa);
  zc_client* b = zc_create(&ob);
  seen sa, sb;
  memset(&sa, 0, sizeof sa);
  memset(&sb, 0, sizeof sb);
  int result = 0;
  if (a == NULL || b == NULL) {
    result = fail(why, why_size, "zc_create failed");
    goto done;
  }
  if (zc_connect(a, host, port) != 0 || zc_connect(b, host, port) != 0) {
    result = fail(why, why_size, "zc_connect failed");
    goto done;
  }
  if (!run_until(a, b, &sa, &sb, both_have_frames, NULL, 20.0)) {
    result = fail(why, why_size, "not both welcomed with a frame");
    goto done;
  }
  {
    zc_welcome w;
    zc_get_welcome(a, &w);
    if (w.entity_id == 0 || w.tick_rate == 0 || zc_field_count(a) < 8 ||
        strcmp(zc_field_name(a, 0), "x") != 0) {
      result = fail(why, why_size, "the welcome or the schema is wrong");
      goto done;
    }
  }
  /* Each sees the other (the test zone's view is the whole world). */
  if (!run_until(a, b, &sa, &sb, sees, NULL, 20.0) ||
      !run_until(b, a, &sb, &sa, sees, NULL, 20.0)) {
    result = fail(why, why_size, "the players do not see each other");
    goto done;
  }
  /* Alice walks six metres east-north-east (or west); her prediction leads the server. */
  {
    zc_player start;
    zc_get_player(a, &start);
    walk_goal g = {start.server_x, start.server_y, 6.0};
    const float mx = (start.server_x < 1000.0) ? 0.9f : -0.9f;
    zc_set_move(a, mx, 0.3f);
    if (!run_until(a, b, &sa, &sb, walked, &g, 20.0)) {
      result = fail(why, why_size, "alice did not move on the server");
      goto done;
    }
    zc_set_move(a, 0.0f, 0.0f);
    zc_player now;
    zc_entity seen_by_bob;
    zc_get_player(a, &now);
    zc_entity_find(b, now.entity_id, &seen_by_bob);
    zc_stats st;
    zc_get_stats(a, &st);
    snprintf(report, report_size,
             "alice walked %.2f m (drawn at %.2f, %.2f; server %.2f, %.2f); bob draws her at "
             "%.2f, %.2f; %llu frames, %llu corrections, largest %.4f m, rtt %u ms, lead %u",
             hypot(now.server_x - start.server_x, now.server_y - start.server_y), now.x, now.y,
             now.server_x, now.server_y, seen_by_bob.x, seen_by_bob.y,
             (unsigned long long)st.frames, (unsigned long long)st.corrections,
             st.largest_correction, st.round_trip_ms, st.input_lead);
    if (fabs(seen_by_bob.x - start.server_x) < 1e-9 &&
        fabs(seen_by_bob.y - start.server_y) < 1e-9) {
      /* Bob draws her in the past, but not still at the start after six metres. */
      result = fail(why, why_size, "bob never saw alice move");
      goto done;
    }
  }
  /* Alice says a line: both hold her, both hear it. */
  if (!zc_send_chat(a, 0, "hello from C", NULL)) {
    result = fail(why, why_size, "zc_send_chat refused while playing");
    goto done;
  }
  if (!run_until(a, b, &sa, &sb, both_chatted, NULL, 20.0)) {
    result = fail(why, why_size, "the chat line did not reach both players");
    goto done;
  }
  {
    zc_player pa;
    zc_get_player(a, &pa);
    if (sb.chat_from != pa.entity_id || strcmp(sb.chat_name, "c-alice") != 0) {
      result = fail(why, why_size, "the chat line names the wrong speaker");
      goto done;
    }
  }
  /* A party of the two, and an action the schema names (answered, whatever the rules say). */
  {
    zc_join_party(a, 0x5eedULL);
    zc_join_party(b, 0x5eedULL);
    const int32_t emote = zc_find_action(a, "emote");
    const uint32_t seq = zc_send_action(a, (uint16_t)(emote >= 0 ? emote : 0), 0, NULL, 0);
    if (seq == 0) {
      result = fail(why, why_size, "zc_send_action refused while playing");
      goto done;
    }
    if (!run_until(a, b, &sa, &sb, grouped, NULL, 20.0)) {
      result = fail(why, why_size, "no party of two, or no answer to the action");
      goto done;
    }
    if (sa.action_sequence != seq) {
      result = fail(why, why_size, "the action's answer carries another sequence");
      goto done;
    }
  }
done:
  if (a != NULL) zc_disconnect(a);
  if (b != NULL) zc_disconnect(b);
  zc_destroy(a);
  zc_destroy(b);
  return result;
}

static int has_frame(zc_client* a, zc_client* b, seen* sa, seen* sb, void* arg) {
  zc_player p;
  (void)b;
  (void)sb;
  (void)arg;
  return sa->welcomed && zc_get_player(a, &p);
}

int zc_test_join(const char* host, uint16_t port, const char* name, const uint8_t* ticket,
                 size_t ticket_size, uint32_t* reason) {
  zc_options o;
  zc_options_init(&o);
  o.player_name = name;
  o.ticket = ticket;
  o.ticket_size = ticket_size;
  zc_client* c = zc_create(&o);
  /* A second client that never connects: run_until drives two. */
  zc_options idle;
  zc_options_init(&idle);
  idle.player_name = "idle";
  zc_client* other = zc_create(&idle);
  seen s, so;
  memset(&s, 0, sizeof s);
  memset(&so, 0, sizeof so);
  int played = 0;
  *reason = 0;
  if (c != NULL && other != NULL && zc_connect(c, host, port) == 0) {
    played = run_until(c, other, &s, &so, has_frame, NULL, 20.0);
    if (!played) *reason = s.disconnected ? s.reason : zc_disconnect_reason(c);
  }
  if (c != NULL) zc_disconnect(c);
  zc_destroy(c);
  zc_destroy(other);
  return played;
}
