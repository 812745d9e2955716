/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The control thread: every control event of a port in one serialised
 * context, dispatched from here: CM events to the connections
 * (ipoib_conn.c), async events to the connections and the link
 * (ipoib_link.c), timers and connection requests from the datapath to
 * the spill policy (ipoib_spill.c). Telemetry and the API
 * read its state under ctrl_lock. With nothing to do it sleeps in the
 * transport's ctrl_wait(), which a CM message, a connection request, a
 * held frame or a peer to resolve cuts short. The sleep starts at
 * IPOIB_CTRL_IDLE_NS after a round that did something and doubles with
 * each idle round up to IPOIB_TICK_NS, the granularity of the timers
 * (promotion, reclaim); while connections drain it stays short. A
 * thread that woke every millisecond took a busy-polling lcore's core
 * for a moment a thousand times a second: on a two-core machine that
 * was one round trip in a hundred of a ping-pong (p99), see
 * ipoib_cm_perf.rst.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <rte_lcore.h>

#include "ipoib_cm.h"
#include "ipoib_compat.h"
#include "ipoib_conn.h"
#include "ipoib_link.h"
#include "ipoib_log.h"
#include "ipoib_tx_held.h"

#define IPOIB_CTRL_IDLE_NS	1000000	/* first sleep after work */
#define IPOIB_CTRL_IDLE_MAX_NS	IPOIB_TICK_NS	/* longest sleep */
#define IPOIB_CONNECT_RING	4096

/*
 * An async event: a QP failed (its connection goes), an SRQ ran low, the
 * port went down or came back, or the transport failed.
 */
static void
ipoib_ctrl_async(struct ipoib_priv *priv, const struct ipoib_async_event *ev)
{
	struct ipoib_conn *c;

	switch (ev->type) {
	case IPOIB_EVENT_QP_FATAL:
		/* our own teardowns put QPs in error too: those do not count */
		if (ev->qp_context >= priv->nr_conns_max)
			break;
		c = priv->conns[ev->qp_context];
		if (c != NULL && c->state != IPOIB_CONN_DRAINING) {
			priv->cstats.qp_errors++;
			IPOIB_LOG(INFO, "connection %u to peer %u failed",
				  c->index, c->peer->index);
			ipoib_conn_close(priv, c, false, true);
		}
		break;
	case IPOIB_EVENT_SRQ_LIMIT:
		priv->srq_limit_events++;
		break;
	case IPOIB_EVENT_PORT_DOWN:
		ipoib_link_event(priv, false);
		break;
	case IPOIB_EVENT_PORT_ACTIVE:
		ipoib_link_event(priv, true);
		break;
	case IPOIB_EVENT_DEVICE_FATAL:
		ipoib_link_fatal(priv);
		break;
	}
}

/* One round of control work; true if there was any. */
static bool
ipoib_ctrl_round(struct ipoib_priv *priv)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	struct ipoib_async_event aev[16];
	struct ipoib_cm_event ev[16];
	int n, i;
	bool work = false;

	n = ops->cm_poll(priv->hca, ev, RTE_DIM(ev));
	for (i = 0; i < n; i++)
		ipoib_conn_handle_cm(priv, &ev[i]);
	work |= n > 0;
	n = ops->async_poll(priv->hca, aev, RTE_DIM(aev));
	for (i = 0; i < n; i++)
		ipoib_ctrl_async(priv, &aev[i]);
	work |= n > 0;
	/* peers learned on lcores get their AH, then what was held goes */
	work |= ipoib_path_poll(priv);
	work |= ipoib_peers_resolve(priv);
	work |= ipoib_tx_held_drain(priv);
	work |= ipoib_mcast_ctrl(priv);
	ipoib_adv_room(priv, ipoib_conn_room(priv, NULL));
	work |= rte_ring_count(priv->connect_req) > 0;
	ipoib_conn_timers(priv, ipoib_now_ns());
	return work;
}

/*
 * ctrl_nice: on a core an lcore polls (EAL puts control threads on the
 * main lcore's when every core is an lcore) each CM step waits for the
 * scheduler to let this thread in, up to a slice (about 1.4 ms here) a
 * time; a lower nice weighs it more (ipoib_cm_perf.rst). Linux's
 * setpriority() with PRIO_PROCESS and 0 sets the calling thread's.
 */
static void
ipoib_ctrl_nice(const struct ipoib_priv *priv)
{
	const struct ipoib_nice *n = &priv->cfg.ctrl_nice;

	if (n->set && setpriority(PRIO_PROCESS, 0, n->value) != 0)
		IPOIB_LOG(ERR, "%s=%d not applied to the control thread: %s",
			  IPOIB_ARG_CTRL_NICE, n->value, strerror(errno));
}

static uint32_t
ipoib_ctrl_main(void *arg)
{
	struct ipoib_priv *priv = arg;
	uint64_t idle_ns = IPOIB_CTRL_IDLE_NS;

	ipoib_ctrl_nice(priv);

	while (!__atomic_load_n(&priv->ctrl_stop, __ATOMIC_ACQUIRE)) {
		bool work;

		pthread_mutex_lock(&priv->ctrl_lock);
		work = ipoib_ctrl_round(priv);
		/* short again after work or while connections drain */
		if (work || priv->nr_draining > 0)
			idle_ns = IPOIB_CTRL_IDLE_NS;
		pthread_mutex_unlock(&priv->ctrl_lock);
		if (!work) {
			priv->ops->ctrl_wait(priv->hca, idle_ns);
			idle_ns = RTE_MIN(2 * idle_ns,
					  (uint64_t)IPOIB_CTRL_IDLE_MAX_NS);
		}
	}
	return 0;
}

int
ipoib_ctrl_start(struct ipoib_priv *priv)
{
	char name[RTE_MAX_THREAD_NAME_LEN];
	int ret;

	if (priv->connect_req == NULL) {
		snprintf(name, sizeof(name), "ipcr_%u",
			 priv->eth_dev->data->port_id);
		priv->connect_req = ipoib_ring_create(&priv->acct,
						      IPOIB_MEM_RINGS, name,
						      sizeof(void *),
						      IPOIB_CONNECT_RING,
						      RING_F_SC_DEQ);
		if (priv->connect_req == NULL)
			return -ENOMEM;
	}
	ret = ipoib_conn_listen(priv);
	if (ret < 0) {
		IPOIB_LOG(ERR, "cannot listen for connections: %s",
			  strerror(-ret));
		return ret;
	}
	priv->stopping = false;
	/* what the first ARP/ND the application sends says of connections */
	ipoib_adv_room(priv, ipoib_conn_room(priv, NULL));
	__atomic_store_n(&priv->ctrl_stop, false, __ATOMIC_RELEASE);
	snprintf(name, sizeof(name), "ipoib-ctl-%u",
		 priv->eth_dev->data->port_id);
	ret = rte_thread_create_control(&priv->ctrl_thread, name,
					ipoib_ctrl_main, priv);
	if (ret != 0) {
		IPOIB_LOG(ERR, "cannot start the control thread: %s",
			  strerror(-ret));
		return ret;
	}
	priv->ctrl_running = true;
	return 0;
}

/*
 * Stop the thread, then take every connection down here: DREQs out, QPs
 * flushed (the rx lcores are stopped: we poll), destroyed when drained.
 */
void
ipoib_ctrl_stop(struct ipoib_priv *priv)
{
	uint64_t deadline;

	if (!priv->ctrl_running)
		return;
	__atomic_store_n(&priv->ctrl_stop, true, __ATOMIC_RELEASE);
	priv->ops->ctrl_wake(priv->hca);
	rte_thread_join(priv->ctrl_thread, NULL);
	priv->ctrl_running = false;
	priv->stopping = true;
	ipoib_conns_close_all(priv, true);
	ipoib_path_fail_all(priv);	/* what waits on a path is dropped */
	deadline = ipoib_now_ns() + 2 * IPOIB_DRAIN_TIMEOUT_NS;
	do {
		ipoib_ctrl_round(priv);
		ipoib_conns_poll_stopped(priv);
	} while (!ipoib_conn_reap_drained(priv) && ipoib_now_ns() < deadline);
	ipoib_pools_spare_free(priv);
	rte_ring_reset(priv->connect_req);
}
