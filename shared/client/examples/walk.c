/* A player through the C ABI alone: connects, walks a square, says hello in chat, and
 * prints what it sees. Usage: zoneclient_walk [host] [port] [name] [seconds]
 * (127.0.0.1 7777 walker 10). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "zoneclient.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  const char* host = argc > 1 ? argv[1] : "127.0.0.1";
  const uint16_t port = (uint16_t)(argc > 2 ? atoi(argv[2]) : 7777);
  const char* name = argc > 3 ? argv[3] : "walker";
  const double seconds = argc > 4 ? atof(argv[4]) : 10.0;

  if (zc_abi_version() != ZC_ABI_VERSION) {
    fprintf(stderr, "zoneclient: ABI %u, built against %u\n", zc_abi_version(), ZC_ABI_VERSION);
    return 1;
  }
  zc_options options;
  zc_options_init(&options);
  options.player_name = name;
  zc_client* client = zc_create(&options);
  if (client == NULL || zc_connect(client, host, port) != 0) {
    fprintf(stderr, "cannot connect to %s:%u\n", host, port);
    zc_destroy(client);
    return 1;
  }
  const double start = now_seconds();
  int said_hello = 0;
  while (now_seconds() - start < seconds && zc_get_state(client) != ZC_STATE_CLOSED) {
    const double t = now_seconds() - start;
    /* A square: each side for two seconds. */
    static const float dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    const int side = (int)(t / 2.0) % 4;
    zc_set_move(client, dirs[side][0], dirs[side][1]);
    zc_update(client, now_seconds());

    zc_event e;
    while (zc_poll_event(client, &e)) {
      switch (e.type) {
        case ZC_EVENT_WELCOME: {
          zc_welcome w;
          zc_get_welcome(client, &w);
          printf("welcome to %s as entity %u (%u Hz)\n", w.zone, w.entity_id, w.tick_rate);
          break;
        }
        case ZC_EVENT_GAME:
          if (e.kind == 0) {
            printf("[chat %d] %s: %s\n", e.args[0], e.name, e.text);
          } else {
            printf("event %s about %u\n", zc_event_name(client, e.kind), e.entity);
          }
          break;
        case ZC_EVENT_DISCONNECTED:
          printf("disconnected, reason %u\n", e.reason);
          break;
        case ZC_EVENT_TRANSFER:
          printf("handed over to %s\n", e.text);
          break;
        default:
          break;
      }
    }
    zc_player me;
    if (!said_hello && zc_get_player(client, &me)) {
      zc_send_chat(client, 0, "hello from C", NULL);
      said_hello = 1;
    }
    sleep_ms(16); /* about 60 frames a second */
  }
  zc_player me;
  if (zc_get_player(client, &me)) {
    printf(
        "at (%.2f, %.2f) m, server tick %u, %u inputs sent (the server applied %u), %u others "
        "in view\n",
        me.x, me.y, me.server_tick, me.last_input_sent, me.last_input_applied,
        zc_entity_count(client));
  }
  zc_stats stats;
  zc_get_stats(client, &stats);
  printf("%llu frames, %llu corrections (largest %.3f m), rtt %u ms\n",
         (unsigned long long)stats.frames, (unsigned long long)stats.corrections,
         stats.largest_correction, stats.round_trip_ms);
  zc_disconnect(client);
  zc_destroy(client);
  return 0;
}
