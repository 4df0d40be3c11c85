/* pnet.h -- a packet network on the engine: nodes, links of several kinds, output queues with
 * pluggable schedulers, TCP Reno endpoints and UDP sources.
 *
 * Nodes are hosts or routers. A packet entering a node costs its CPU
 * cpu_packet_s + cpu_byte_s x size (one FIFO processor per node: store and
 * forward), then goes to the output link the routing table names for its
 * destination, or to the transport endpoint if the node is the destination.
 *
 * A link carries packets one way from a node to a node. Its kind sets the
 * bytes on the wire (framing, ATM cell tax, HDLC stuffing); its medium is
 * dedicated (one transmitter: full duplex is two links) or shared by every
 * link attached to the same segment (CSMA/CD with binary exponential
 * backoff, or CSMA with collisions found only at the end of a frame).
 * Each link has an output queue whose scheduler decides what is sent next.
 *
 * Packets are counted in bytes of the IP datagram (`size`). */
#ifndef PYSIM_PNET_H
#define PYSIM_PNET_H

#include <stdint.h>

#include "pysim/engine.h"
#include "pysim/rng.h"

/* --- packets ------------------------------------------------------------------------------ */

enum pn_kind { PN_DATA = 0, PN_ACK = 1, PN_UDP = 2, PN_REQUEST = 3, PN_REPLY = 4 };
enum pn_ecn { PN_ECT = 1, PN_CE = 2, PN_ECE = 4 };

typedef struct pn_pkt {
    struct pn_pkt *next;
    uint32_t flow, size, src, dst;
    uint8_t kind, ecn;
    uint16_t cls;          /* set by the classifier of the queue it waits in */
    int64_t seq;           /* TCP: segment number (data) or next expected (ack) */
    double sent_s;         /* when the transport made it */
    double enq_s;          /* when it entered the current queue */
    double tag;            /* the scheduler's own use (WFQ's finish tag) */
} pn_pkt;

/* --- queues and schedulers ------------------------------------------------------------------ */

enum pn_sched_kind { PN_FIFO = 0, PN_RED = 1, PN_SFQ = 2, PN_DRR = 3, PN_WFQ = 4, PN_TBF = 5, PN_CBQ = 6 };

/* A classifier maps a packet to a class of the queue's scheduler (DRR, WFQ, CBQ); it may be a
 * compiled Python function. The default uses the flow-to-class table. */
typedef int32_t (*pn_classifier)(uint32_t flow, uint32_t src, uint32_t dst, uint32_t size, uint32_t kind);

#define PN_MAX_CLASSES 64

typedef struct pn_class_spec {
    int32_t parent;        /* CBQ: the parent class, -1 for the root (the link) */
    double rate_share;     /* CBQ: share of the link; DRR: quantum in bytes; WFQ: weight */
    int32_t priority;      /* CBQ: 0 is served first */
    int32_t borrow;        /* CBQ: may borrow from its parent */
    int32_t maxburst;      /* CBQ: packets an underlimit class may send back to back */
    uint32_t limit;        /* packets this class may hold (0: the queue's limit) */
} pn_class_spec;

typedef struct pn_queue_spec {
    enum pn_sched_kind kind;
    uint32_t limit_packets;   /* 0: no limit */
    uint64_t limit_bytes;     /* 0: no limit */
    /* RED (Floyd and Jacobson 1993); thresholds in packets, or bytes with red_bytes */
    double red_min, red_max, red_max_p, red_wq;
    int32_t red_gentle, red_ecn, red_bytes;
    double mean_pkt_bytes;      /* RED's idle-time correction, RED in bytes, CBQ's maxidle */
    /* SFQ: buckets */
    uint32_t sfq_buckets;
    /* TBF */
    double tbf_rate_bps, tbf_bucket_bytes;
    /* CBQ: the timer that wakes an overlimit class (0: exact), the estimator's gain (2^-k) */
    double cbq_timer_s;
    int32_t cbq_gain_shift;
    /* classes (DRR, WFQ, CBQ) */
    int32_t nclasses;
    pn_class_spec classes[PN_MAX_CLASSES];
    int32_t default_class;
} pn_queue_spec;

typedef struct pn_queue_stats {
    uint64_t arrivals, drops, marks, departures, bytes_out;
    double area_packets, area_bytes;  /* integrals over time of the queue's length */
    uint64_t class_departures[PN_MAX_CLASSES], class_bytes[PN_MAX_CLASSES], class_drops[PN_MAX_CLASSES];
} pn_queue_stats;

/* --- links ----------------------------------------------------------------------------------- */

enum pn_link_kind { PN_P2P = 0, PN_ETHERNET = 1, PN_ATM_AAL5 = 2, PN_HDLC = 3, PN_WAVELAN = 4, PN_MYRINET = 5 };
enum pn_medium { PN_DEDICATED = 0, PN_CSMA_CD = 1, PN_CSMA = 2 };

typedef struct pn_link_spec {
    int32_t from, to;
    enum pn_link_kind kind;
    double bits_per_s, delay_s;
    uint32_t mtu;                 /* larger packets are refused (the sender fragments) */
    enum pn_medium medium;
    int32_t segment;              /* shared media: links with the same segment contend */
    double slot_s;                /* CSMA: the slot time (51.2 us on 10 Mbit/s Ethernet) */
    uint32_t extra_bytes;         /* added to every packet's wire bytes (a link header of the caller's) */
    pn_queue_spec queue;
} pn_link_spec;

/* Bytes a packet of `size` takes on the wire of a link kind (framing, cells, stuffing). */
uint64_t pn_wire_bytes(enum pn_link_kind kind, uint32_t size);

/* --- the network ------------------------------------------------------------------------------- */

typedef struct pn_net pn_net;

typedef struct pn_tcp_spec {
    int32_t src, dst;
    double start_s;
    int64_t bytes;         /* < 0: send forever */
    uint32_t mss;          /* payload bytes per segment */
    uint32_t header_bytes; /* 40 for TCP/IP */
    double initial_cwnd;   /* segments */
    double max_window;     /* segments (the receiver's window) */
    double min_rto_s, initial_rto_s;
    int32_t delayed_ack;   /* ack every second segment, or after ack_delay_s */
    double ack_delay_s;
    int32_t ecn;
    int32_t cls;           /* the class its packets carry for a flow-table classifier */
} pn_tcp_spec;

enum pn_udp_pattern { PN_CBR = 0, PN_POISSON = 1, PN_ONOFF = 2, PN_RPC = 3 };

typedef struct pn_udp_spec {
    int32_t src, dst;
    enum pn_udp_pattern pattern;
    double start_s, stop_s;
    double rate_pps;        /* packets per second (while on) */
    uint32_t size;          /* bytes per packet (RPC: the request) */
    double on_s, off_s;     /* ON/OFF: mean period lengths (exponential) */
    uint32_t reply_size;    /* RPC: bytes of each reply */
    double service_s;       /* RPC: the server's work per request, beyond its node's CPU */
    int32_t outstanding;    /* RPC: requests in flight at once (closed loop) */
    int32_t cls;
} pn_udp_spec;

typedef struct pn_flow_stats {
    uint64_t sent_packets, sent_bytes, delivered_packets, delivered_bytes, retransmits, timeouts;
    uint64_t fast_retransmits, ecn_reductions, completed;   /* RPC: replies received */
    double first_s, last_s, delay_sum_s, done_s;            /* delivery times; done: a finite flow */
    double cwnd, srtt_s;                                    /* at the end of the run */
} pn_flow_stats;

pn_net *pn_new(ps_engine *e, ps_rng *rng);  /* rng: RED, SFQ, backoff and UDP draws */
void pn_free(pn_net *n);
/* Returns the node's index, or a negative status. */
int32_t pn_add_node(pn_net *n, double cpu_packet_s, double cpu_byte_s);
/* Returns the link's index, or a negative status (bad nodes, kinds, rates, queue spec). */
int32_t pn_add_link(pn_net *n, const pn_link_spec *spec);
/* Packets at `node` for `dst` leave on `link` (which must start at node). */
int pn_route(pn_net *n, int32_t node, int32_t dst, int32_t link);
/* A queue's classifier (NULL: the flow table). */
int pn_set_classifier(pn_net *n, int32_t link, pn_classifier fn);
int32_t pn_add_tcp(pn_net *n, const pn_tcp_spec *spec);
int32_t pn_add_udp(pn_net *n, const pn_udp_spec *spec);
/* Sample every queue's length every `interval_s` into a buffer of `capacity` samples per link. */
int pn_trace_queues(pn_net *n, double interval_s, int64_t capacity);

int32_t pn_nodes(const pn_net *n);
int32_t pn_links(const pn_net *n);
int32_t pn_flows(const pn_net *n);
const pn_flow_stats *pn_get_flow(const pn_net *n, int32_t flow);
const pn_queue_stats *pn_get_queue(const pn_net *n, int32_t link);
/* Seconds a link's medium carried its own frames (collisions and backoff excluded), and collisions. */
double pn_link_busy_s(const pn_net *n, int32_t link);
uint64_t pn_link_collisions(const pn_net *n, int32_t link);
/* Queue-length samples of a link (packets), and how many there are. */
const uint32_t *pn_queue_trace(const pn_net *n, int32_t link, int64_t *count);
/* Packets dropped at nodes for want of a route. */
uint64_t pn_unroutable(const pn_net *n);
uint64_t pn_packets_moved(const pn_net *n);  /* link transmissions, for speed figures */

#endif
