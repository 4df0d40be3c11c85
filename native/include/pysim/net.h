/* net.h -- links and Ethernet: frame timing and a shared segment.
 *
 * A frame carrying p payload bytes is header + max(p, min_payload) + FCS
 * bytes on the wire (padding to the minimum frame), preceded by the preamble
 * and followed by the inter-frame gap. frame time counts the frame only (a
 * 64-byte frame at 10 Mbit/s: 51.2 us); occupancy adds preamble and gap,
 * the time the medium is unusable for anyone else. A message larger than
 * max_payload is split into full frames and one remainder.
 *
 * A link is a FIFO medium on a ps_engine: sends are serialised in the order
 * they are made, whole message by whole message (no per-frame interleaving
 * between senders, no collisions), and each is delivered when its last bit
 * has propagated. */
#ifndef PYSIM_NET_H
#define PYSIM_NET_H

#include <stdint.h>

#include "pysim/engine.h"

typedef struct eth_params {
    double bits_per_s;        /* 10e6 for 10 Mbit/s */
    uint32_t header_bytes;    /* 14: dst, src, type */
    uint32_t fcs_bytes;       /* 4 */
    uint32_t min_frame_bytes; /* 64: header + payload + FCS at least */
    uint32_t max_payload;     /* 1500 */
    uint32_t preamble_bytes;  /* 8, with the start delimiter */
    uint32_t gap_bytes;       /* 12: 9.6 us at 10 Mbit/s */
    double propagation_s;     /* end to end */
} eth_params;

int eth_check(const eth_params *p); /* PS_OK or PS_EINVAL */
/* Bytes of the frame on the wire (without preamble and gap); payload <= max_payload. */
uint32_t eth_frame_bytes(const eth_params *p, uint32_t payload);
double eth_frame_time(const eth_params *p, uint32_t payload);     /* seconds */
double eth_frame_occupancy(const eth_params *p, uint32_t payload);/* seconds, with preamble and gap */
uint64_t eth_frames(const eth_params *p, uint64_t message_bytes);  /* >= 1 (an empty message is one frame) */
/* Medium occupancy of a whole message, seconds. */
double eth_message_occupancy(const eth_params *p, uint64_t message_bytes);

typedef struct link_stats {
    uint64_t messages, frames, bytes;
    double busy_s; /* seconds the medium was occupied */
} link_stats;

typedef struct ps_link ps_link;

ps_link *link_new(ps_engine *e, const eth_params *p); /* NULL if invalid or out of memory */
void link_free(ps_link *l);
/* Send a message now; `fn(ctx, arg)` runs when it has arrived. *arrive_s
 * (optional) receives the arrival time. PS_OK, PS_ENOMEM. */
int link_send(ps_link *l, uint64_t message_bytes, ps_handler fn, void *ctx, int64_t arg, double *arrive_s);
const link_stats *link_get_stats(const ps_link *l);

#endif
