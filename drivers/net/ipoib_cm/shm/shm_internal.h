/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef SHM_INTERNAL_H
#define SHM_INTERNAL_H

/*
 * Layout of the fabric's shared memory, and the process-local handles.
 *
 * Everything under "shared" is seen by every attached process: fields are
 * fixed-size, offsets instead of pointers, and every field another process
 * may write concurrently is accessed with __atomic builtins. Ordering rules
 * are stated where each field is used.
 */

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/futex.h>

#include "ipoib_util.h"
#include "shm_fabric.h"
#include "shm_log.h"

#define SHM_MAGIC		0x69706f6962636d31ULL	/* "ipoibcm1" */
#define SHM_VERSION		10	/* 10: 32-byte CQEs naming the RQ by id */
/*
 * A process's arena is a set of segments, each a shared memory object
 * mapped whole: applications that mlockall() (testpmd does) lock every page
 * mapped, so nothing is mapped that is not used. An arena offset holds the
 * segment index above SHM_SEG_SHIFT.
 */
#define SHM_SEG_SHIFT		40
#define SHM_SEG_OFF_MASK	((1ULL << SHM_SEG_SHIFT) - 1)
#define SHM_MAX_SEGS		1024
#define SHM_LL_BUCKETS		(2 * SHM_MAX_PORTS)	/* a power of 2 */
#define SHM_LL_MASK		(SHM_LL_BUCKETS - 1)
#define SHM_LL_FREED		UINT32_MAX
#define SHM_SEG_MIN		(8ULL << 20)
#define SHM_OFF(seg, off)	((uint64_t)(seg) << SHM_SEG_SHIFT | (off))
#define SHM_ALIGN		64
#define SHM_CACHE_LINE		64
#define SHM_SUBNET_PREFIX	0xfe80000000000000ULL
#define SHM_CM_RING		64	/* CM mailbox entries per port */
#define SHM_STALL_NS		(2ULL * 1000000000ULL)
/*
 * A CQ found empty with its head this far into a lap, or farther, starts
 * the next lap (shm_cq_rewind()): 128 CQEs of 32 bytes, one 4 KiB page.
 */
#define SHM_CQ_REWIND_AT	128
/*
 * How far ahead of the oldest entry a rewound CQ's positions may run: a
 * CQE's seq is its position mod 2^32, so an entry skipped by rewinds must
 * not come within 2^32 positions of a later one of its slot.
 */
#define SHM_CQ_REWIND_SPAN	(1ULL << 31)
/*
 * An idle RC QP whose peer went is put in error this long after: time for
 * the DREQ of an orderly teardown, sent just before, to be handled first.
 */
#define SHM_GONE_GRACE_NS	(200ULL * 1000000ULL)

/*
 * A receive queue's id (in its ring and its CQEs): its index in its
 * process's table and above it a generation, never 0, so a completion of
 * a queue destroyed is not taken for the next one at its index.
 */
#define SHM_RQ_IDX_BITS		17
#define SHM_RQ_MAX		(1u << SHM_RQ_IDX_BITS)
#define SHM_RQ_CHUNK		1024	/* table entries allocated at once */
#define SHM_RQ_IDX(id)		((id) & (SHM_RQ_MAX - 1))
#define SHM_ANY_RQ		0	/* shm_cq_pending(): no queue's id */

#define SHM_QPN_INDEX(qpn)	((qpn) & (SHM_MAX_QPS - 1))
#define SHM_QPN_GEN(qpn)	(((qpn) >> 16) & 0xff)

#define shm_load(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define shm_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define shm_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define shm_store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define shm_add(p, v)		__atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

#define SHM_ALIGNED		__attribute__((aligned(SHM_CACHE_LINE)))

/* ---- shared: directory ------------------------------------------------ */

enum shm_proc_state {
	SHM_PROC_FREE,
	SHM_PROC_ACTIVE,
	SHM_PROC_DEAD,		/* being reclaimed */
};

struct shm_proc_ent {
	uint32_t state;
	uint32_t gen;		/* bumped at every attach of this slot */
	int32_t pid;
	uint32_t uid;
	uint64_t start_time;	/* /proc/<pid>/stat field 22: pid reuse */
	uint32_t nr_segs;	/* arena segments created */
} SHM_ALIGNED;

enum shm_port_state {
	SHM_PORT_FREE,
	SHM_PORT_ACTIVE,
	SHM_PORT_DOWN,
};

struct shm_port_ent {
	uint32_t state;
	uint32_t proc;
	uint32_t proc_gen;
	uint16_t lid;
	uint16_t ib_mtu;
	uint64_t guid;
	uint8_t gid[IPOIB_GID_LEN];
	uint16_t npkeys;
	uint16_t pkeys[IPOIB_PKEY_TABLE_LEN];
	uint32_t max_qp, max_qp_wr, max_srq_wr, max_cqe;
	uint32_t nr_qp;
	uint32_t nr_rc_conn;	/* RC QPs in RTR/RTS: rej_after counts them */
	uint64_t cm_ring_off;	/* CM mailbox, in the owner's arena */
	/* published link-layer identity (the directory's address records) */
	uint32_t ll_valid;
	uint32_t ll_qpn;
	uint8_t ll_flags;
	uint8_t ll_mac[6];
	uint32_t ll_slot;	/* bucket of ll_index + 1 that holds it; 0 */
	/* fault injection, written by the owner, read by senders */
	uint32_t fault_drop_ppm;
	uint32_t fault_cm_delay_ms;
	int32_t fault_rej_after;
	uint32_t fault_cm_drop_mask;
	/*
	 * SA multicast memberships (shm_sa.c), bit g for shm_hdr.sa_mcgs[g]:
	 * written under the lock, read by senders without it.
	 */
	uint64_t sa_full;	/* full member: receives the group's traffic */
	uint64_t sa_send_only;	/* send-only member: sends, never receives */
	/* counters, added to by senders */
	uint64_t cnt_ud_no_wr;
	uint64_t cnt_pkey_drops;
	uint64_t cnt_qkey_drops;
	uint64_t cnt_len_errs;
	uint64_t cnt_fault_drops;
	uint64_t cnt_cm_drops;
	uint64_t cnt_rnr_naks;	/* of this port's sends */
	uint64_t cnt_link_down_drops;	/* of this port's sends */
} SHM_ALIGNED;

struct shm_qp_ent {
	uint32_t state;		/* enum shm_qp_state */
	uint8_t type;
	uint8_t gen;
	uint8_t rnr_retry;
	uint8_t pad;
	uint32_t port;
	uint32_t proc;		/* owner; its arena holds rq and cq */
	uint32_t qkey;
	uint16_t pkey;
	uint16_t pad2;
	uint32_t qp_context;
	uint32_t remote_qpn;	/* RC: the connected peer QP */
	uint64_t rq_off;	/* own RQ or the SRQ */
	uint64_t cq_off;
	/*
	 * UD: what arrives is spread by flow over the receive queues of
	 * these QPs (this one among them), their CQs too, as an HCA's RSS
	 * spreads over its receive work queues (shm_qp_rss_set()). Read
	 * without the lock: the QPNs, key and types first, nr_rss last (0:
	 * not spread); relaxed words, as a sender may read them meanwhile.
	 */
	uint32_t nr_rss;
	uint32_t rss[SHM_RSS_MAX];
	uint32_t rss_key[IPOIB_RSS_KEY_LEN / 4];	/* bytes in order */
	uint32_t rss_types;				/* IPOIB_RSS_* */
} SHM_ALIGNED;

struct shm_mcg_ent {
	uint8_t mgid[IPOIB_GID_LEN];
	uint32_t nr_members;	/* 0: free */
	uint32_t members[SHM_MCG_MAX_MEMBERS];	/* QPNs */
};

/*
 * A multicast group as the SA knows it (its MCMemberRecord, IBTA
 * 15.2.5.17): created by a join, deleted when its last member leaves
 * unless the SA pre-created it. Written under the lock; senders find it
 * without the lock by in_use (stored last on create, first on delete).
 */
struct shm_sa_mcg {
	uint32_t in_use;
	uint32_t persistent;	/* pre-created (IPoIB broadcast): kept */
	uint32_t nr_members;	/* ports with a membership of any kind */
	uint32_t qkey;
	uint32_t flow_label;
	uint16_t mlid;		/* 0xc000 + index: IBTA multicast LIDs */
	uint16_t pkey;
	uint16_t mtu;		/* bytes */
	uint8_t sl;
	uint8_t tclass;
	uint8_t hop_limit;
	uint8_t pad[3];
	uint8_t mgid[IPOIB_GID_LEN];
};

struct shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t owner_uid;
	uint64_t size;
	uint32_t ready;		/* set last by the creator */
	uint32_t next_lid;
	uint32_t incarnation;	/* in segment names: no two fabrics share one */
	pthread_mutex_t lock;	/* robust, process-shared: directory */
	struct shm_proc_ent procs[SHM_MAX_PROCS];
	struct shm_port_ent ports[SHM_MAX_PORTS];
	struct shm_qp_ent qps[SHM_MAX_QPS];
	struct shm_mcg_ent mcgs[SHM_MAX_MCGS];
	/* the subnet administrator's groups (shm_sa.c) */
	struct shm_sa_mcg sa_mcgs[SHM_MAX_MCGS];
	uint32_t sa_ipoib_qkey;	/* pre-created IPoIB groups; 0: default */
	uint16_t sa_ipoib_mtu;	/* 0: default */
	/*
	 * The address records by MAC: open addressing, linear probing, port
	 * + 1 per bucket (SHM_LL_FREED once its port left). Written under
	 * the lock, probed without it: a bucket never becomes empty again,
	 * so a record is never beyond an empty bucket of its probe path.
	 */
	uint32_t ll_index[SHM_LL_BUCKETS];
};

/* ---- shared: queues, in the owner's arena ------------------------------ */

/*
 * A completion, two a line: a sender writes half a line (one the receiver
 * last read) per small message. seq, written last (release), is h + 1 mod
 * 2^32 for position h: far more than a CQ holds, so no earlier lap's
 * entry matches (laps skipped by rewinds included: shm_cq_rewind()).
 * rq_id: the slot's receive queue (shm_rq_find()).
 */
struct shm_cqe {
	uint32_t seq;
	uint32_t rq_id;
	uint32_t slot;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t qp_context;
	uint16_t slid;
	uint8_t status;
	uint8_t wc_flags;
} __attribute__((aligned(32)));

/* A CQE's fields after seq (shm_cq_entry_fill()). */
#define SHM_CQE_BODY_LEN	(sizeof(struct shm_cqe) - \
				 offsetof(struct shm_cqe, rq_id))
_Static_assert(offsetof(struct shm_cqe, rq_id) == sizeof(uint32_t) &&
	       offsetof(struct shm_cqe, seq) == 0 &&
	       sizeof(struct shm_cqe) == SHM_CACHE_LINE / 2,
	       "a CQE is seq, then its body, two to a line");

/*
 * From byte_len to wc_flags a CQE holds the fields of struct ipoib_wc in
 * its order: shm_cq_poll() copies them in one piece.
 */
#define SHM_CQE_WC_LEN	(offsetof(struct shm_cqe, wc_flags) + 1 - \
			 offsetof(struct shm_cqe, byte_len))
#define SHM_CQE_WC_AT(fld) \
	(offsetof(struct shm_cqe, fld) - offsetof(struct shm_cqe, byte_len) == \
	 offsetof(struct ipoib_wc, fld) - offsetof(struct ipoib_wc, byte_len))
_Static_assert(SHM_CQE_WC_AT(qp_num) && SHM_CQE_WC_AT(src_qp) &&
	       SHM_CQE_WC_AT(qp_context) && SHM_CQE_WC_AT(slid) &&
	       SHM_CQE_WC_AT(status) && SHM_CQE_WC_AT(wc_flags) &&
	       sizeof(struct ipoib_wc) >= offsetof(struct ipoib_wc, byte_len) +
	       SHM_CQE_WC_LEN, "shm_cqe and ipoib_wc differ from byte_len on");

/*
 * Each side's moving index on a line of its own, and what never changes
 * on a third: the consumer stores head at every poll, and a size read from
 * its line cost the sender a miss per message.
 */
struct shm_cq_ring {
	uint32_t size;
	uint32_t mask;
	uint64_t tail SHM_ALIGNED;	/* producers: fetch_add */
	uint64_t head SHM_ALIGNED;	/* consumer: release-stored */
	struct shm_cqe cqe[] SHM_ALIGNED;
};

/* Bytes of a CQ of size CQEs, its ring header included. */
static inline size_t
shm_cq_bytes(uint32_t size)
{
	return sizeof(struct shm_cq_ring) + (size_t)size * sizeof(struct shm_cqe);
}

/*
 * A posted receive WR of several SGEs, by slot: what a sender and the
 * owner's capture read of it. A WR of one SGE writes none: its SGE is in
 * its ring entry and in the poster's one_off[] (struct shm_rq).
 */
struct shm_rdesc_sge {
	uint64_t off;		/* offset in the owner's arena */
	uint32_t len;
	uint32_t pad;
};

struct shm_rdesc {
	uint32_t num_sge;
	uint32_t total_len;
	struct shm_rdesc_sge sge[];
};

/*
 * A posted receive WR as senders claim it: its slot and, for a WR of one
 * SGE (every WR of the driver's whose frames fit an mbuf), that SGE, so
 * that neither side touches a descriptor for it (one read by the sender
 * was a line the receiver wrote at each post: a miss after the ring's on
 * every send). off SHM_RQ_ENT_DESC: several SGEs, in the slot's
 * descriptor.
 */
struct shm_rq_ent {
	uint64_t off;		/* arena offset of the one SGE */
	uint64_t meta;		/* slot << 32 | the SGE's length: one load */
};
#define SHM_RQ_ENT_DESC		UINT64_MAX
#define SHM_RQ_ENT_META(slot, len)	((uint64_t)(slot) << 32 | (len))
#define SHM_RQ_ENT_LEN(e)	((uint32_t)(e)->meta)
#define SHM_RQ_ENT_SLOT(e)	((uint32_t)((e)->meta >> 32))

/*
 * A receive queue (own or shared). The owner posts entries at prod
 * (release); senders claim from cons with a CAS after an acquire load of
 * prod. An entry at position p is rewritten only once cons > p, so a
 * sender that read it before its CAS succeeded holds a valid one.
 */
struct shm_rq_ring {
	/* fixed at creation or written rarely: read by every side */
	uint32_t size;		/* ring entries, power of 2 */
	uint32_t mask;
	uint32_t max_wr;	/* descriptor slots */
	uint32_t max_sge;
	uint32_t desc_stride;
	uint32_t is_srq;
	uint32_t limit;		/* SRQ limit; 0: disarmed */
	uint32_t limit_fired;
	uint32_t flushed;	/* in error: posts complete at once */
	uint32_t desc_rel;	/* descriptor table, from the ring's start */
	uint32_t id;		/* the completions' rq_id */
	uint32_t pad;
	uint64_t cq_off;	/* own RQ: the QP's receive CQ */
	/* the owner's index and the senders', a line each */
	uint64_t prod SHM_ALIGNED;
	uint64_t cons SHM_ALIGNED;
	struct shm_rq_ent ring[] SHM_ALIGNED;
};

/* A CM message; seq published last, like a CQE. */
struct shm_cm_msg {
	uint64_t seq;
	uint64_t deliver_ns;	/* CLOCK_MONOTONIC: fault delay */
	uint8_t type;
	uint8_t priv_len;
	uint16_t reason;
	uint32_t src_port;
	uint32_t local_id;	/* sender's communication id */
	uint32_t remote_id;	/* receiver's, 0 in a REQ */
	uint64_t service_id;
	uint32_t qpn;		/* sender's RC QP (REQ, REP) */
	uint16_t pkey;
	uint16_t src_lid;
	uint8_t rnr_retry;
	uint8_t retry_count;
	uint8_t resp_res;
	uint8_t max_cm_retries;
	uint8_t src_gid[IPOIB_GID_LEN];
	uint8_t priv[IPOIB_CM_PRIV_MAX];
} SHM_ALIGNED;

struct shm_cm_ring {
	uint64_t tail SHM_ALIGNED;	/* producers: CAS */
	uint32_t bell;			/* futex: +1 per message or wake */
	uint32_t sleepers;		/* threads in FUTEX_WAIT on bell */
	uint64_t head SHM_ALIGNED;	/* consumer */
	struct shm_cm_msg msg[SHM_CM_RING];
};

/* ---- process-local ----------------------------------------------------- */

struct shm_extent {
	uint64_t off;
	uint64_t len;
};

/* One of our segments. */
struct shm_seg {
	uint8_t *base;
	size_t size;
	int fd;
	struct shm_extent *free;	/* free extents, sorted */
	unsigned int nr_free, cap_free;
};

/* Extents of a peer's segment this process has populated, kept per map. */
#define SHM_POPULATED	8

/* A peer's segment as we mapped it. */
struct shm_seg_map {
	uint8_t *base;		/* NULL: not mapped */
	size_t size;
	uint32_t gen;
	uint32_t nr_populated;	/* shm_arena_populate(), lock held */
	uint64_t populated[SHM_POPULATED];
};

struct shm_fabric {
	char name[SHM_FABRIC_NAME_MAX + 1];
	int refcnt;
	struct shm_fabric *next;	/* list of attached fabrics */
	struct shm_hdr *hdr;
	size_t hdr_size;
	uint32_t proc;		/* our slot */
	uint32_t gen;
	pthread_mutex_t lock;	/* process-local control state */
	struct shm_seg segs[SHM_MAX_SEGS];	/* our arena */
	uint32_t nr_segs;
	/* peers' segments, mapped on first use */
	struct shm_seg_map *maps[SHM_MAX_PROCS];
	uint64_t next_janitor_ns;
	uint32_t cm_next_id;
	uint32_t incarnation;	/* of the header we mapped */
	dev_t hdr_dev;		/* the header object, to notice its removal */
	ino_t hdr_ino;
	bool lost;		/* atomic: our objects are gone from /dev/shm */
	uint64_t arena_used;	/* bytes allocated in our arena (lock) */
	/*
	 * Our receive queues by id (SHM_RQ_IDX()): chunks allocated under
	 * the lock, one more only when those there are full, and kept until
	 * detach; entries stored under the lock and read by pollers without
	 * it (shm_rq_find()).
	 */
	struct shm_rq **rq_tab[SHM_RQ_MAX / SHM_RQ_CHUNK];
	uint32_t rq_chunks;	/* allocated: rq_tab[0 .. rq_chunks) */
	uint32_t rq_next;	/* where the next free index is looked for */
	uint32_t rq_gen;	/* queues created: the ids' upper bits */
};

struct shm_capture;
struct shm_sa_req;

#define SHM_EVQ_LEN	256

struct shm_port {
	struct shm_fabric *f;
	uint32_t index;
	struct shm_port_ent *ent;
	struct shm_cm_ring *cm;
	uint32_t bell_seen;	/* cm->bell, read before the last round */
	/* async events raised in this process, for this port */
	struct shm_async_event evq[SHM_EVQ_LEN];
	unsigned int ev_head, ev_tail;
	uint32_t last_state;	/* port state last reported */
	bool lost_reported;	/* SHM_EV_FABRIC_LOST raised */
	uint64_t arena_bytes;	/* arena its queues take (atomic) */
	/* RC QPs of this port, watched for a vanished peer */
	struct shm_qp **qps;
	unsigned int nr_qps, cap_qps;
	struct shm_rq **srqs;
	unsigned int nr_srqs;
	/* CM */
	uint64_t *listen;
	unsigned int nr_listen;
	struct shm_cm_id **ids;
	unsigned int nr_ids, cap_ids;
	uint64_t cm_retries;
	uint32_t ud_send_refuse;	/* fault: UD send WRs left to refuse */
	uint8_t ah_hold;		/* fault: shm_port_ah_wait() waits */
	struct shm_capture *cap;
	pthread_mutex_t cap_lock;
	/* SA queries posted and not answered yet (shm_sa.c) */
	pthread_mutex_t sa_lock;
	struct shm_sa_req *sa_q;
	unsigned int sa_nr, sa_cap;
	uint64_t sa_due_ns;	/* atomic: earliest answer due; UINT64_MAX */
	uint32_t sa_delay_ms, sa_drop_ppm;	/* faults, under sa_lock */
	uint64_t sa_drops, sa_errors;		/* under sa_lock */
};

struct shm_cq {
	struct shm_port *port;
	struct shm_cq_ring *ring;
	uint64_t off;
	uint64_t head;		/* local copy of the consumer index */
	uint32_t committed;	/* receive WRs that may complete here */
	uint64_t stall_since;
	uint64_t stall_skips;
	/* shm_cq_rewind(): every entry's position is at least oldest - 1 */
	uint64_t oldest;
	uint64_t walk_from;	/* positions since then all published */
	uint64_t rewinds;
	uint64_t rewind_span;	/* SHM_CQ_REWIND_SPAN; tests lower it */
};

struct shm_rq {
	struct shm_port *port;
	struct shm_rq_ring *ring;
	uint64_t off;
	uint32_t id;		/* SHM_RQ_IDX() and a generation */
	/* by slot, the poster's: the WR's id, and its one SGE's offset */
	uint64_t *wr_id;
	uint64_t *one_off;	/* SHM_RQ_ENT_DESC: several, in the descriptor */
	/*
	 * Stack of free slot ids: a slot is taken when a WR is posted and
	 * given back when its completion is polled, so max_wr - nr_free are
	 * posted and not yet polled (shm_rq_posted()).
	 */
	uint32_t *free_slots;
	uint32_t nr_free;
	uint32_t max_wr;	/* the poster's copy: the ring's is shared */
	struct shm_cq *cq;	/* SRQ: the CQ it was first attached to */
	size_t size;		/* arena bytes */
	uint32_t qpn;		/* own RQ: its QP, for flush completions */
	uint32_t qp_context;
	uint32_t users;		/* SRQ: QPs attached */
};

/*
 * The receiving end of an RC QP's sends: what its peer's entry said when
 * the QP connected (shm_qp_connect()). It holds while the entry is still
 * the peer's (its gen is the peer QPN's: shm_rc_peer_gone()); the entry's
 * fields do not change in between, nor does a port's LID.
 */
struct shm_rc_dst {
	struct shm_rq_ring *r;
	struct shm_cq_ring *c;
	uint32_t proc;
	uint32_t port;		/* the receiver's port (its counters) */
	struct shm_cqe tmpl;	/* what its completions have in common */
};

struct shm_qp {
	struct shm_port *port;
	struct shm_qp_ent *ent;
	uint32_t qpn;
	enum shm_qp_type type;
	struct shm_rq *rq;	/* own RQ, or the SRQ */
	bool own_rq;
	struct shm_cq *cq;
	/* sender side: the connected peer, resolved */
	struct shm_qp_ent *peer;
	uint32_t peer_qpn;
	/* written once, before the state that lets senders read it */
	struct shm_rc_dst dst;
	bool dst_ok;		/* dst was resolved */
	uint64_t rnr_since;	/* first refused send of a streak, ns */
	uint64_t gone_since;	/* peer first seen gone by the watch, ns */
	uint8_t rnr_retry;	/* IPOIB_RNR_RETRY_FOREVER: for ever */
	bool reported_err;	/* QP_FATAL raised */
	uint32_t mcgs;		/* groups attached */
};

/* ---- helpers shared by the fabric's files ------------------------------ */

#define SHM_BURST	64

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

static inline struct shm_rdesc *
shm_rdesc(struct shm_rq_ring *r, uint32_t slot)
{
	return (struct shm_rdesc *)((uint8_t *)r + r->desc_rel +
				    (uint64_t)slot * r->desc_stride);
}

/* Same partition, and not both limited members (IBTA 10.9.3). */
static inline bool
shm_pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000);
}

int shm_lock(struct shm_fabric *f);
void shm_unlock(struct shm_fabric *f);
/* The address records' index (shm_hdr.ll_index), lock held to change it. */
uint32_t shm_ll_bucket(const uint8_t *mac);
void shm_ll_unindex(struct shm_hdr *h, struct shm_port_ent *e);
void shm_ll_index(struct shm_hdr *h, uint32_t port);
/* Our arena: its segments' names, the first segment. */
void shm_seg_name(char *buf, size_t len, const struct shm_fabric *f,
		  uint32_t proc, uint32_t gen, uint32_t seg);
int shm_arena_create(struct shm_fabric *f);
void *shm_arena_map(struct shm_fabric *f, uint32_t proc, uint64_t off);
/* The segment of the last lkey asked about (lkey UINT32_MAX: none yet). */
struct shm_seg_view {
	uint32_t lkey;
	uintptr_t base;
	uint64_t size;
};

/*
 * Is [addr, addr + len) inside our segment lkey, one of the first nr_segs?
 * Gives its arena offset. Inline, and v keeps the segment between calls:
 * every receive WR posted asks it of each of its segments, mostly of one.
 */
static inline bool
shm_arena_own_in(const struct shm_fabric *f, uint32_t nr_segs,
		 struct shm_seg_view *v, uint32_t lkey, uint64_t addr,
		 uint64_t len, uint64_t *off)
{
	if (unlikely(lkey != v->lkey)) {
		if (lkey >= nr_segs)
			return false;
		v->lkey = lkey;
		v->base = (uintptr_t)f->segs[lkey].base;
		v->size = f->segs[lkey].size;
	}
	/* below base, the difference wraps to more than size */
	addr -= v->base;
	if (addr > v->size || len > v->size - addr)
		return false;
	*off = SHM_OFF(lkey, addr);
	return true;
}

/* The same, with the segments registered now (nr_segs: an acquire load). */
static inline bool
shm_arena_own(struct shm_fabric *f, uint32_t lkey, uint64_t addr,
	      uint64_t len, uint64_t *off)
{
	struct shm_seg_view v = { .lkey = UINT32_MAX };

	return shm_arena_own_in(f, __atomic_load_n(&f->nr_segs,
						   __ATOMIC_ACQUIRE),
				&v, lkey, addr, len, off);
}

/* Address of arena offset off of process proc (mapped on first use). */
static inline void *
shm_arena_ptr(struct shm_fabric *f, uint32_t proc, uint64_t off)
{
	uint32_t seg = (uint32_t)(off >> SHM_SEG_SHIFT);
	const struct shm_seg_map *maps;
	uint8_t *base;

	if (proc == f->proc)
		return f->segs[seg].base + (off & SHM_SEG_OFF_MASK);
	maps = __atomic_load_n(&f->maps[proc], __ATOMIC_ACQUIRE);
	/* gen is published after base: the current gen has its base */
	if (maps != NULL &&
	    __atomic_load_n(&maps[seg].gen, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&f->hdr->procs[proc].gen, __ATOMIC_RELAXED)) {
		base = __atomic_load_n(&maps[seg].base, __ATOMIC_RELAXED);
		if (base != NULL)
			return base + (off & SHM_SEG_OFF_MASK);
	}
	return shm_arena_map(f, proc, off);
}
/* Flags: pages now; a CQ (2 MiB aligned, huge from SHM_HUGE_PAGE). */
#define SHM_ARENA_COMMIT	1u
#define SHM_ARENA_WALKED	2u
#define SHM_HUGE_PAGE		(2ULL << 20)
int shm_arena_alloc(struct shm_fabric *f, size_t len, unsigned int flags,
		    uint64_t *off);
/* Map a peer's CQ, committed, now; once per extent (shm_cq_populate()). */
void shm_arena_populate(struct shm_fabric *f, uint32_t proc, uint64_t off,
			size_t len);
void shm_arena_free(struct shm_fabric *f, uint64_t off, size_t len);
/* The same for a port's own queues, counted in its arena_bytes. */
int shm_port_arena_alloc(struct shm_port *p, size_t len, unsigned int flags,
			 uint64_t *off);
void shm_port_arena_free(struct shm_port *p, uint64_t off, size_t len);
/* The entry slot a QPN names, allocated or not; NULL for no QPN at all. */
struct shm_qp_ent *shm_qp_slot(struct shm_fabric *f, uint32_t qpn);
struct shm_qp_ent *shm_qp_lookup(struct shm_fabric *f, uint32_t qpn);
/*
 * UD delivery to the QP of entry d (a copy, see below), qpn dqpn: the
 * receive queue the message goes to by its flow when d spreads
 * (shm_qp_rss_set()), its entry copied into *v; d itself otherwise.
 */
const struct shm_qp_ent *shm_rss_pick(struct shm_fabric *f,
				      const struct shm_qp_ent *q,
				      const struct shm_qp_ent *d,
				      uint32_t *dqpn, const struct shm_send *wr,
				      struct shm_qp_ent *v);
/*
 * A QP entry as a lock-free reader sees it. The entry is written under the
 * directory lock when it is (re)allocated and read without it: each field
 * is stored and loaded whole, and gen is checked before and after the
 * copy (shm_qp_ent_alloc() changes it before the fields), and against the
 * QPN the reader holds. *state and *type: as loaded, for tests in
 * registers rather than in the copy after its fence.
 */
static inline bool
shm_qp_ent_read_st(const struct shm_qp_ent *q, uint32_t qpn,
		   struct shm_qp_ent *v, uint32_t *state, uint8_t *type)
{
	uint8_t gen = shm_load(&q->gen);
	uint32_t port;

	*state = shm_load(&q->state);
	*type = shm_load_relaxed(&q->type);
	port = shm_load_relaxed(&q->port);
	v->state = *state;
	v->type = *type;
	v->port = port;
	v->proc = shm_load_relaxed(&q->proc);
	v->qkey = shm_load_relaxed(&q->qkey);
	v->pkey = shm_load_relaxed(&q->pkey);
	v->qp_context = shm_load_relaxed(&q->qp_context);
	v->remote_qpn = shm_load_relaxed(&q->remote_qpn);
	v->rq_off = shm_load_relaxed(&q->rq_off);
	v->cq_off = shm_load_relaxed(&q->cq_off);
	/* as a seqlock: the fields are of gen if gen did not change */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	v->gen = shm_load_relaxed(&q->gen);
	return v->gen == gen && gen == SHM_QPN_GEN(qpn) &&
	       *state != SHM_QPS_FREE && port < SHM_MAX_PORTS;
}

static inline bool
shm_qp_ent_read(const struct shm_qp_ent *q, uint32_t qpn,
		struct shm_qp_ent *v)
{
	uint32_t state;
	uint8_t type;

	return shm_qp_ent_read_st(q, qpn, v, &state, &type);
}

/*
 * Of a UD QP in RTS (a datagram's target). In the copy, GCC merged the
 * two tests into one 8-byte load the copy's 4- and 1-byte stores cannot
 * forward to: a stall a message (perf of dpdk-test pmd_perf_autotest).
 */
static inline bool
shm_qp_ent_read_ud(const struct shm_qp_ent *q, uint32_t qpn,
		   struct shm_qp_ent *v)
{
	uint32_t state;
	uint8_t type;

	return shm_qp_ent_read_st(q, qpn, v, &state, &type) &&
	       type == SHM_QPT_UD && state == SHM_QPS_RTS;
}

/* Queue an async event of port p for shm_async_poll() (owner only). */
static inline void
shm_port_event(struct shm_port *p, const struct shm_async_event *ev)
{
	if (p->ev_tail - p->ev_head >= SHM_EVQ_LEN) {
		SHM_LOG(WARNING, "port %u: async event queue full", p->index);
		return;
	}
	p->evq[p->ev_tail++ % SHM_EVQ_LEN] = *ev;
}
int shm_port_find_gid(struct shm_fabric *f, const uint8_t *gid);
int shm_port_find_gid_locked(struct shm_fabric *f, const uint8_t *gid);

void shm_janitor(struct shm_fabric *f);
void shm_qp_watch(struct shm_port *p);
/*
 * A sender's side of a peer's CQ its RC QP completes into, mapped at
 * connection (shm_arena_populate()): not a fault per 4 KiB on its sends.
 */
void shm_cq_populate(struct shm_fabric *f, uint32_t proc, uint64_t cq_off);
/* Receive queues (own or shared) and completions waiting for them. */
struct shm_rq *shm_rq_create(struct shm_port *p, uint32_t max_wr,
			     uint32_t max_sge, bool srq);
void shm_rq_free(struct shm_rq *rq);
void shm_rq_flush(struct shm_rq *rq);
uint32_t shm_cq_pending(const struct shm_cq *cq, uint32_t rq_id);
/* QP state as senders change it (as they see it: shm_rc_send.h). */
void shm_qp_set_err(struct shm_qp *qp);
int shm_qp_connect(struct shm_qp *qp, uint32_t remote_qpn, uint8_t rnr_retry,
		   enum shm_qp_state state);

void shm_capture_tx(struct shm_port *p, const struct shm_send *wr,
		    uint32_t dqpn, const uint8_t *dgid, uint32_t len);
void shm_capture_rx(struct shm_port *p, const struct ipoib_wc *wc,
		    const struct shm_rdesc_sge *sge, uint32_t num_sge);
void shm_capture_close(struct shm_port *p);

/*
 * ThreadSanitizer only. A receive buffer (and a completion entry) goes from
 * sender to sender through the receiver: the sender's CQE, the receiver's
 * poll and its repost, the next sender's claim (for an entry, the receiver
 * consuming it before the tail comes round). When the receiver is another
 * process, TSan sees none of that, and two threads of this process that
 * fill the same buffer one after the other (an lcore's send, then the
 * control thread's) look like a race. The claim hands a buffer or an entry
 * to one sender at a time (a CAS, a fetch-add); these say so where TSan
 * looks: taken before the sender writes it, given after.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define shm_tsan_buf_take(d) __tsan_acquire((void *)(uintptr_t)(d))
#define shm_tsan_buf_give(d) __tsan_release((void *)(uintptr_t)(d))
#else
#define shm_tsan_buf_take(d) ((void)(d))
#define shm_tsan_buf_give(d) ((void)(d))
#endif

/*
 * Decide a fault-injected drop: ppm in a million, a per-thread PRNG (each
 * file that decides has its own stream; only the rate matters).
 */
static inline bool
shm_fault_drop(uint32_t ppm)
{
	static __thread uint64_t state;

	if (ppm == 0)
		return false;
	if (state == 0)
		state = ipoib_now_ns() | 1;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state % 1000000 < ppm;
}

#endif /* SHM_INTERNAL_H */
