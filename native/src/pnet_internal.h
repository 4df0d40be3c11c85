/* pnet_internal.h -- the packet network's structures, shared by pnet.c, pnet_queue.c and pnet_tcp.c. */
#ifndef PYSIM_PNET_INTERNAL_H
#define PYSIM_PNET_INTERNAL_H

#include "pysim/pnet.h"

typedef struct pn_fifo {
    pn_pkt *head, *tail;
    uint32_t n;
    uint64_t bytes;
} pn_fifo;

typedef struct pn_cls {
    pn_fifo q;
    double deficit;          /* DRR */
    double finish;           /* WFQ: the last finish tag */
    double avgidle, undertime, last_s, rate_bps, maxidle, minidle, offtime;  /* CBQ */
    int32_t burst;           /* CBQ: packets sent in the current burst */
    int32_t active;
} pn_cls;

typedef struct pn_queue {
    pn_queue_spec spec;
    pn_classifier classify;
    pn_fifo q;                    /* FIFO, RED, TBF, and the total for the others */
    uint32_t n;                   /* packets held in all */
    uint64_t bytes;
    pn_cls cls[PN_MAX_CLASSES];   /* SFQ buckets, DRR/WFQ/CBQ classes */
    int32_t ncls, rr;
    int32_t rr_prio[8];           /* CBQ: the round-robin position at each priority */
    double red_avg, red_idle_since;
    int64_t red_count;
    int32_t red_old;              /* RED: the average was above min_th at the last arrival */
    double tbf_tokens, tbf_t;
    double wfq_vtime;
    double link_bps;
    pn_queue_stats st;
    double t_last;
    ps_rng *rng;
    struct pn_net *net;           /* whose packet pool a dropped packet returns to */
} pn_queue;

typedef struct pn_node {
    struct pn_net *net;
    int32_t index;
    double cpu_packet_s, cpu_byte_s, cpu_free_at;
    int32_t *route;              /* per destination node: the outgoing link, or -1 */
    int32_t route_cap;
} pn_node;

typedef struct pn_link {
    struct pn_net *net;
    int32_t index;
    pn_link_spec spec;
    pn_queue q;
    int busy, retry_pending;
    double busy_s;
    uint64_t collisions;
    /* shared media: the frame being tried, its attempts and its transmission's generation */
    pn_pkt *tx;
    int32_t attempts;
    double tx_start, tx_end;
    int64_t tx_gen;
    int tx_collided;
    uint32_t *trace;
    int64_t ntrace;
} pn_link;

typedef struct pn_flow {
    int32_t is_tcp;
    pn_tcp_spec tcp;
    pn_udp_spec udp;
    pn_flow_stats st;
    /* TCP sender */
    int64_t snd_una, snd_nxt, snd_max, total_segs, recover;
    int64_t fr_recover;  /* the highest segment sent at the last fast retransmit or timeout */
    double cwnd, ssthresh, srtt, rttvar, rto;
    int32_t dupacks, in_recovery, have_rtt;
    int64_t timer_gen;
    double *sent_at;   /* per segment (ring of the window's size): when first sent, or -1 if resent */
    int64_t sent_cap;
    /* TCP receiver */
    int64_t rcv_nxt;
    uint8_t *ooo;      /* ring of received-out-of-order flags */
    int64_t ooo_cap;
    int32_t unacked;
    int64_t ack_gen;
    int32_t ece_pending;
    /* UDP */
    int32_t on;
    int64_t rpc_seq;
} pn_flow;

struct pn_net {
    ps_engine *e;
    ps_rng *rng;
    pn_node *nodes;
    int32_t nnodes, cap_nodes;
    pn_link *links;
    int32_t nlinks, cap_links;
    pn_flow *flows;
    int32_t nflows, cap_flows;
    int32_t *flow_class;
    pn_pkt *free_pkts;
    uint64_t unroutable, moved;
    double trace_interval_s;
    int64_t trace_cap;
    int status;                  /* the first error a handler met (out of memory) */
};

pn_pkt *pn_pkt_new(struct pn_net *n);
void pn_pkt_free(struct pn_net *n, pn_pkt *p);
/* Hand a packet to a node (it arrives now). */
int pn_node_receive(struct pn_net *n, int32_t node, pn_pkt *p);

/* queues (pnet_queue.c) */
int pn_queue_init(pn_queue *q, const pn_queue_spec *spec, double link_bps, struct pn_net *net, ps_rng *rng);
void pn_queue_free(pn_queue *q);
/* 0: queued, 1: dropped (the caller frees it) */
int pn_queue_enqueue(pn_queue *q, pn_pkt *p, double now);
/* The next packet to send, or NULL; *retry_at gets when a shaper could send (INFINITY: never). */
pn_pkt *pn_queue_dequeue(pn_queue *q, double now, double *retry_at);
/* Tell the scheduler a packet of this class finished on the wire (CBQ's estimator). */
void pn_queue_sent(pn_queue *q, const pn_pkt *p, double now);

/* TCP (pnet_tcp.c) */
int pn_tcp_start(struct pn_net *n, int32_t flow);
int pn_tcp_deliver(struct pn_net *n, pn_pkt *p);   /* a data segment or an ack at its endpoint */
void pn_tcp_free(pn_flow *f);

#endif
