/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * fuzz_cm: connection management messages as they arrive in a port's CM
 * mailbox (struct shm_cm_msg, shm_internal.h), processed by the fabric's
 * CM (shm_cm_poll), and the REQ/REP private data (struct ipoib_cm_data)
 * parsed as the driver does (ipoib_conn_req/ipoib_conn_rep).
 *
 * One fabric of this process with three ports: A, the port under test,
 * listening on both IPoIB service IDs of its UD QPN; B, its peer, with RC
 * QPs a REQ or REP may name; C, in another partition. Each input first
 * opens active connections from A to B (ids in REQ_SENT), then delivers
 * its messages one by one into A's mailbox, as another port would; after
 * each, A's CM is polled and its events are answered as the driver does:
 * REQ accepted (REP), refused (REJ) or left pending, REP answered with an
 * RTU or a REJ, an established connection disconnected (DREQ), the others
 * destroy the id. What A sends to B and C is read from their mailboxes:
 * the communication ids there are what later messages may name, so REP,
 * RTU, REJ, DREQ and DREP reach ids in every state.
 *
 * Input: 2 bytes (A's REJ-after fault: bit 7 on, bits 0-2 the count; the
 * number of active connections, 0-3, bits 0-1 of the second; bit 2 of it:
 * to C instead of B), then records of 18 bytes, each followed by
 * min(priv_len, 92) bytes of private data:
 *   type, ctl, idx, priv_len, reason (2), local_id (4), raw (4), pkey (2),
 *   retries, act
 *   ctl bits 0-1: from B, C, A itself, or port <raw>
 *   ctl bits 2-3: remote_id: an id A sent (idx), 0, <raw>, an id + 1
 *   ctl bit 4: service ID: one A listens on (idx bit 0), else <raw>
 *   ctl bit 5: QPN: one of B's RC QPs (idx), else <raw>
 *   ctl bit 6: P_Key: 0xffff, else <pkey>
 *   ctl bit 7: delivered later (the mailbox waits for it)
 *   act bits 0-1: a REQ is accepted, refused, left pending, accepted
 *   act bit 2: an established connection is disconnected
 *   act bit 3: A is polled a second time
 *
 * Properties: no stray access or leak; a malformed message is counted
 * (cm_drops) and makes no id and no event; events name live ids and carry
 * at most 92 bytes of private data; the private data parser refuses what
 * is short and REP MTUs <= 4, and bounds what it accepts; once every id
 * and QP is gone the port counts no RC connection.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>

#include "ipoib_wire.h"
#include "shm_internal.h"
#include "shm_log.h"

#define FUZZ_CHECK(cond) do {			\
	if (!(cond))				\
		__builtin_trap();		\
} while (0)

#define A_UD_QPN	0x000123
#define NB_BQP		4
#define MAX_KNOWN	32
#define MAX_AQP		256
#define EV_BURST	4

struct rec {
	uint8_t type;
	uint8_t ctl;
	uint8_t idx;
	uint8_t priv_len;
	uint8_t reason[2];
	uint8_t local_id[4];
	uint8_t raw[4];
	uint8_t pkey[2];
	uint8_t retries;
	uint8_t act;
};
#define REC_LEN		((ptrdiff_t)sizeof(struct rec))	/* 18 */

static char fabric[SHM_FABRIC_NAME_MAX + 1];
static struct shm_fabric *fab;
static struct shm_port *pa, *pb, *pc;
static struct shm_cq *cqa, *cqb;
static struct shm_rq *srqa, *srqb;
static struct shm_qp *bqp[NB_BQP];
static struct shm_port_info ia, ib, ic;

/* Per input: ids A put in messages, and A's QPs. */
static uint32_t known[MAX_KNOWN];
static unsigned int nr_known;
static struct shm_qp *aqp[MAX_AQP];
static unsigned int nr_aqp;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The private data check of ipoib_conn_req() / ipoib_conn_rep()
 * (drivers/net/ipoib_cm/ipoib_conn.c), which cannot be reached without a
 * whole driver instance: the same statements, extracted. Keep in step
 * with ipoib_conn.c until the driver exposes it (see the fuzzing guide).
 */
static int
cm_data_parse(const uint8_t *priv, uint8_t priv_len, bool rep,
	      uint32_t *qpn, uint32_t *mtu)
{
	struct ipoib_cm_data data;

	if (priv_len < sizeof(data))
		return -EBADMSG;	/* cstats.cm_malformed */
	memcpy(&data, priv, sizeof(data));
	*qpn = rte_be_to_cpu_32(data.qpn) & IPOIB_QPN_MASK;
	*mtu = rte_be_to_cpu_32(data.mtu);
	if (rep) {
		if (*mtu <= IPOIB_HDR_LEN)	/* Linux refuses these too */
			return -EBADMSG;
		*mtu = RTE_MIN(*mtu, (uint32_t)IPOIB_CM_BUF_SIZE);
	}
	return 0;
}

static void
cleanup(void)
{
	unsigned int i;

	if (fab == NULL)
		return;
	for (i = 0; i < NB_BQP; i++)
		shm_qp_destroy(bqp[i]);
	shm_srq_destroy(srqa);
	shm_srq_destroy(srqb);
	shm_cq_destroy(cqa);
	shm_cq_destroy(cqb);
	shm_port_close(pa);
	shm_port_close(pb);
	shm_port_close(pc);
	shm_fabric_detach(fab);
	shm_fabric_unlink_stale(fabric);
	fab = NULL;
}

static struct shm_port *
port_open(const char *name, uint16_t pkey, struct shm_port_info *info)
{
	struct shm_port_conf pc_ = {
		.name = name,
		.ib_mtu = 2048,
		.npkeys = 1,
		.pkeys = { pkey },
	};
	struct shm_port *p;

	FUZZ_CHECK(shm_port_open(fab, &pc_, &p) == 0);
	shm_port_query(p, info);
	return p;
}

static struct shm_qp *
rc_qp(struct shm_port *p, struct shm_cq *cq, struct shm_rq *srq)
{
	struct shm_qp_conf qc = {
		.type = SHM_QPT_RC,
		.recv_cq = cq,
		.srq = srq,
		.max_recv_sge = 1,
	};

	return shm_qp_create(p, &qc);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned int i;

	(void)argc;
	(void)argv;
	shm_set_logger(NULL, 0);	/* nothing below ERR (3) */
	snprintf(fabric, sizeof(fabric), "fzcm%d", (int)getpid());
	FUZZ_CHECK(shm_fabric_attach(fabric, &fab) == 0);
	atexit(cleanup);
	pa = port_open("A", 0xffff, &ia);
	pb = port_open("B", 0xffff, &ib);
	pc = port_open("C", 0x8001, &ic);
	cqa = shm_cq_create(pa, 1024);
	cqb = shm_cq_create(pb, 1024);
	srqa = shm_srq_create(pa, 64, 1, 0);
	srqb = shm_srq_create(pb, 64, 1, 0);
	FUZZ_CHECK(cqa && cqb && srqa && srqb);
	for (i = 0; i < NB_BQP; i++) {
		bqp[i] = rc_qp(pb, cqb, srqb);
		FUZZ_CHECK(bqp[i] != NULL);
	}
	FUZZ_CHECK(shm_cm_listen(pa, IPOIB_CM_SID_OFED | A_UD_QPN) == 0);
	FUZZ_CHECK(shm_cm_listen(pa, IPOIB_CM_SID_RFC | A_UD_QPN) == 0);
	return 0;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Read what A sent to port p: the communication ids it used. */
static void
drain(struct shm_port *p)
{
	struct shm_cm_ring *r = p->cm;

	while (r->head < r->tail) {
		struct shm_cm_msg *m = &r->msg[r->head % SHM_CM_RING];

		FUZZ_CHECK(m->seq == r->head + 1);
		FUZZ_CHECK(m->type >= IPOIB_CM_MSG_REQ &&
			   m->type <= IPOIB_CM_MSG_DREP &&
			   m->priv_len <= IPOIB_CM_PRIV_MAX);
		if (m->src_port == pa->index && m->local_id != 0 &&
		    nr_known < MAX_KNOWN) {
			unsigned int i;

			for (i = 0; i < nr_known; i++)
				if (known[i] == m->local_id)
					break;
			if (i == nr_known)
				known[nr_known++] = m->local_id;
		}
		r->head++;
	}
}

static bool
id_live(const struct shm_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < pa->nr_ids; i++)
		if (pa->ids[i] == id)
			return true;
	return false;
}

static struct shm_qp *
a_qp(void)
{
	struct shm_qp *qp;

	if (nr_aqp == MAX_AQP)
		return NULL;
	qp = rc_qp(pa, cqa, srqa);
	if (qp != NULL)
		aqp[nr_aqp++] = qp;
	return qp;
}

/* Our side of the private data, as the driver sends it. */
static void
our_data(struct ipoib_cm_data *d)
{
	d->qpn = rte_cpu_to_be_32(A_UD_QPN);
	d->mtu = rte_cpu_to_be_32(IPOIB_CM_BUF_SIZE);
}

static void
refuse(struct shm_cm_id *id)
{
	shm_cm_reject(id, 28, NULL, 0);
	shm_cm_destroy(id);
}

/* Answer one event as the driver does. */
static void
handle(const struct shm_cm_event *ev, uint8_t act)
{
	struct shm_cm_id *id = ev->id;
	struct ipoib_cm_data d;
	uint32_t qpn, mtu;
	struct shm_qp *qp;
	int ret;

	/* an earlier event of the burst may have destroyed it */
	if (!id_live(id))
		return;
	FUZZ_CHECK(ev->port == pa && ev->priv_len <= IPOIB_CM_PRIV_MAX);
	switch (ev->type) {
	case IPOIB_CM_REQ_RCVD:
		ret = cm_data_parse(ev->priv, ev->priv_len, false, &qpn, &mtu);
		if (ret < 0) {
			FUZZ_CHECK(ev->priv_len < sizeof(d));
			refuse(id);
			break;
		}
		FUZZ_CHECK(qpn <= IPOIB_QPN_MASK);
		if ((act & 3) == 1) {
			refuse(id);
			break;
		}
		if ((act & 3) == 2)
			break;		/* pending: destroyed at the end */
		our_data(&d);
		qp = a_qp();
		if (qp == NULL || shm_cm_accept(id, qp, NULL,
		    (const uint8_t *)&d, (act & 3) == 3 ? 0 : sizeof(d)) < 0)
			refuse(id);
		break;
	case IPOIB_CM_REP_RCVD:
		ret = cm_data_parse(ev->priv, ev->priv_len, true, &qpn, &mtu);
		if (ret == 0) {
			FUZZ_CHECK(ev->priv_len >= sizeof(d) &&
				   mtu > IPOIB_HDR_LEN &&
				   mtu <= IPOIB_CM_BUF_SIZE &&
				   qpn <= IPOIB_QPN_MASK);
			if (shm_cm_rtu(id) == 0)
				break;
		}
		refuse(id);
		break;
	case IPOIB_CM_ESTABLISHED:
		if (act & 4)
			shm_cm_disconnect(id);
		break;
	case IPOIB_CM_REJ_RCVD:
	case IPOIB_CM_TIMEOUT:
	case IPOIB_CM_DREQ_RCVD:
	case IPOIB_CM_DISCONNECTED:
		shm_cm_destroy(id);
		break;
	default:
		FUZZ_CHECK(0);
	}
}

static void
poll_a(uint8_t act)
{
	struct shm_cm_event ev[EV_BURST];
	int n, i;

	n = shm_cm_poll(pa, ev, EV_BURST);
	FUZZ_CHECK(n >= 0 && n <= EV_BURST);
	for (i = 0; i < n; i++)
		handle(&ev[i], act);
}

static void
connect_b(bool to_c, uint8_t i)
{
	struct ipoib_cm_data d;
	struct shm_cm_req req = {
		.service_id = IPOIB_CM_SID_OFED | (0x200 + i),
		.dgid = to_c ? ic.gid : ib.gid,
		.rnr_retry_count = 7,
		.max_cm_retries = 15,
		.responder_resources = 4,
		.priv_len = sizeof(d),
		.priv = (const uint8_t *)&d,
	};
	struct shm_cm_id *id;

	our_data(&d);
	req.qp = a_qp();
	if (req.qp != NULL)
		FUZZ_CHECK(shm_cm_connect(pa, &req, &id) == 0);
}

/* Put the message of r (private data p, n bytes) in A's mailbox. */
static bool
deliver(const struct rec *r, const uint8_t *p, size_t n)
{
	struct shm_cm_ring *ring = pa->cm;
	uint32_t raw = get32(r->raw);
	struct shm_cm_msg *m;
	uint64_t t = ring->tail;

	if (t - ring->head >= SHM_CM_RING)
		return false;		/* full: the sender drops it */
	m = &ring->msg[t % SHM_CM_RING];
	memset((uint8_t *)m + sizeof(m->seq), 0, sizeof(*m) - sizeof(m->seq));
	m->type = r->type;
	m->priv_len = r->priv_len;
	m->reason = (uint16_t)(r->reason[0] << 8 | r->reason[1]);
	switch (r->ctl & 3) {
	case 0:
		m->src_port = ib.index;
		memcpy(m->src_gid, ib.gid, IPOIB_GID_LEN);
		m->src_lid = ib.lid;
		break;
	case 1:
		m->src_port = ic.index;
		memcpy(m->src_gid, ic.gid, IPOIB_GID_LEN);
		m->src_lid = ic.lid;
		break;
	case 2:
		m->src_port = ia.index;
		memcpy(m->src_gid, ia.gid, IPOIB_GID_LEN);
		m->src_lid = ia.lid;
		break;
	default:
		m->src_port = raw;
		break;
	}
	m->local_id = get32(r->local_id);
	switch ((r->ctl >> 2) & 3) {
	case 0:
		m->remote_id = nr_known ? known[r->idx % nr_known] : 0;
		break;
	case 1:
		m->remote_id = 0;
		break;
	case 2:
		m->remote_id = raw;
		break;
	default:
		m->remote_id = nr_known ? known[r->idx % nr_known] + 1 : 1;
		break;
	}
	m->service_id = (r->ctl & 0x10) ? (uint64_t)raw << 32 | raw :
			((r->idx & 1) ? IPOIB_CM_SID_RFC : IPOIB_CM_SID_OFED) |
			A_UD_QPN;
	m->qpn = (r->ctl & 0x20) ? raw : shm_qp_num(bqp[r->idx % NB_BQP]);
	m->pkey = (r->ctl & 0x40) ? (uint16_t)(r->pkey[0] << 8 | r->pkey[1]) :
		  0xffff;
	m->rnr_retry = r->retries & 7;
	m->max_cm_retries = r->retries >> 3;
	m->deliver_ns = (r->ctl & 0x80) ? ipoib_now_ns() + 1000000000ULL : 0;
	memcpy(m->priv, p, n);
	__atomic_store_n(&m->seq, t + 1, __ATOMIC_RELEASE);
	ring->tail = t + 1;
	return true;
}

static bool
malformed(const struct rec *r, const struct shm_cm_ring *ring)
{
	const struct shm_cm_msg *m = &ring->msg[(ring->tail - 1) % SHM_CM_RING];

	return r->type < IPOIB_CM_MSG_REQ || r->type > IPOIB_CM_MSG_DREP ||
	       r->priv_len > IPOIB_CM_PRIV_MAX || m->src_port >= SHM_MAX_PORTS;
}

static void
reset(void)
{
	unsigned int i;

	while (pa->nr_ids > 0)
		shm_cm_destroy(pa->ids[pa->nr_ids - 1]);
	for (i = 0; i < nr_aqp; i++)
		FUZZ_CHECK(shm_qp_destroy(aqp[i]) == 0);
	nr_aqp = 0;
	nr_known = 0;
	/* every connection counted is gone with its QP */
	FUZZ_CHECK(pa->ent->nr_rc_conn == 0);
	pa->cm->head = pa->cm->tail;
	drain(pb);
	drain(pc);
	pa->ent->fault_rej_after = -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size;
	unsigned int i;

	if (size < 2)
		return -1;
	/* the same ids every time: an input replays */
	fab->cm_next_id = 0x1000;
	pa->ent->fault_rej_after = (data[0] & 0x80) ? (data[0] & 7) : -1;
	for (i = 0; i < (data[1] & 3u); i++)
		connect_b(data[1] & 4, (uint8_t)i);
	drain(pb);
	drain(pc);
	for (data += 2; end - data >= REC_LEN;) {
		const struct rec *r = (const void *)data;
		size_t want = r->priv_len < IPOIB_CM_PRIV_MAX ? r->priv_len :
			      IPOIB_CM_PRIV_MAX;
		size_t n = RTE_MIN(want, (size_t)(end - data - REC_LEN));
		uint64_t drops = pa->ent->cnt_cm_drops;
		bool alone = pa->cm->head == pa->cm->tail;
		unsigned int ids = pa->nr_ids;
		struct shm_cm_event ev[EV_BURST];
		int k, j;

		data += REC_LEN;
		if (deliver(r, data, n) && alone && !(r->ctl & 0x80) &&
		    malformed(r, pa->cm)) {
			/*
			 * Refused as a whole: consumed, counted, no id, no
			 * event. A loaded machine may stall an input past a
			 * response timeout (100 ms): the timer's events and
			 * resends (to A itself too) are legitimate.
			 */
			uint64_t pos = pa->cm->tail - 1;

			k = shm_cm_poll(pa, ev, EV_BURST);
			FUZZ_CHECK(pa->cm->head > pos);
			FUZZ_CHECK(pa->ent->cnt_cm_drops == drops + 1);
			FUZZ_CHECK(pa->nr_ids == ids);
			for (j = 0; j < k; j++) {
				FUZZ_CHECK(ev[j].type == IPOIB_CM_TIMEOUT);
				handle(&ev[j], r->act);
			}
		} else {
			poll_a(r->act);
			if (r->act & 8)
				poll_a(r->act);
		}
		data += n;
		drain(pb);
		drain(pc);
	}
	reset();
	return 0;
}
