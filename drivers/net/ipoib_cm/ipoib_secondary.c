/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Secondary processes (dpdk-proc-info, dpdk-dumpcap, telemetry of a
 * secondary): they attach to the primary's ports and read them.
 *
 * The port's HCA objects, its transport's mappings and its control thread
 * belong to the primary: in a secondary the datapath cannot run, and its
 * bursts return 0 and say so once. What a secondary asks of the port is
 * answered by the primary, through EAL's multi-process channel (rte_mp):
 * it is admitted (not while the port closes), its statistics and
 * extended statistics are read and reset there, under the locks the
 * primary's own readers take. The answers land in memory the secondary
 * allocated from DPDK's shared heap.
 *
 * The primary serves one request at a time, under ipoib_mp_lock, which
 * dev_close also takes to mark the port closing: a request either ends
 * before the port starts to close or is refused (-ENODEV).
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_string_fns.h>

#include "ipoib_cm.h"
#include "ipoib_filter.h"
#include "ipoib_info.h"
#include "ipoib_log.h"
#include "ipoib_rss.h"
#include "ipoib_secondary.h"
#include "ipoib_telemetry.h"
#include "ipoib_xstats.h"

#define IPOIB_MP_NAME		"ipoibcm_mp"
#define IPOIB_MP_TIMEOUT_S	5

enum ipoib_mp_op {
	IPOIB_MP_ATTACH = 1,	/* may a secondary use the port? */
	IPOIB_MP_STATS,		/* rte_eth_stats into buf */
	IPOIB_MP_XSTATS,	/* the driver's n xstats into buf */
	IPOIB_MP_RESET,		/* stats and xstats reset */
};

struct ipoib_mp_req {
	uint32_t op;
	uint32_t n;
	uint64_t buf;		/* shared heap, allocated by the secondary */
	char name[RTE_DEV_NAME_MAX_LEN];
};

struct ipoib_mp_rep {
	int32_t ret;
};

static pthread_mutex_t ipoib_mp_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- primary ------------------------------------------------------------ */

static int
ipoib_mp_serve(const struct ipoib_mp_req *req)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	struct ipoib_priv *priv;
	uint16_t port;

	strlcpy(name, req->name, sizeof(name));
	if (rte_eth_dev_get_port_by_name(name, &port) != 0)
		return -ENODEV;
	priv = ipoib_priv_of_port(port);
	if (priv == NULL)
		return -ENODEV;
	if (priv->closing) {
		if (req->op == IPOIB_MP_ATTACH) {
			pthread_mutex_lock(&priv->ctrl_lock);
			priv->cstats.sec_refused++;
			pthread_mutex_unlock(&priv->ctrl_lock);
			IPOIB_LOG(WARNING, "%s: a secondary process asked to "
				  "attach while the port closes: refused",
				  name);
		}
		return -ENODEV;
	}
	switch (req->op) {
	case IPOIB_MP_ATTACH:
		pthread_mutex_lock(&priv->ctrl_lock);
		priv->cstats.sec_attaches++;
		pthread_mutex_unlock(&priv->ctrl_lock);
		IPOIB_LOG(INFO, "%s: a secondary process attached", name);
		return 0;
	case IPOIB_MP_STATS:
		return rte_eth_stats_get(port,
				(struct rte_eth_stats *)(uintptr_t)req->buf);
	case IPOIB_MP_XSTATS:
		return ipoib_xstats_get(&rte_eth_devices[port],
				(struct rte_eth_xstat *)(uintptr_t)req->buf,
				req->n);
	case IPOIB_MP_RESET:
		return rte_eth_stats_reset(port);
	}
	return -EINVAL;
}

static int
ipoib_mp_handle(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	struct ipoib_mp_rep *rep = (struct ipoib_mp_rep *)reply.param;
	struct ipoib_mp_req req;

	RTE_BUILD_BUG_ON(sizeof(req) > RTE_MP_MAX_PARAM_LEN);
	memset(&reply, 0, sizeof(reply));
	strlcpy(reply.name, msg->name, sizeof(reply.name));
	reply.len_param = sizeof(*rep);
	if (msg->len_param != sizeof(req)) {
		rep->ret = -EINVAL;
	} else {
		memcpy(&req, msg->param, sizeof(req));
		pthread_mutex_lock(&ipoib_mp_lock);
		rep->ret = ipoib_mp_serve(&req);
		pthread_mutex_unlock(&ipoib_mp_lock);
	}
	return rte_mp_reply(&reply, peer);
}

void
ipoib_secondary_serve(void)
{
	/* once per process; without shared files (--no-shconf) no IPC */
	if (rte_mp_action_register(IPOIB_MP_NAME, ipoib_mp_handle) < 0 &&
	    rte_errno != EEXIST && rte_errno != ENOTSUP)
		IPOIB_LOG(WARNING, "secondary processes cannot read the ports: "
			  "%s", rte_strerror(rte_errno));
}

void
ipoib_secondary_closing(struct ipoib_priv *priv)
{
	pthread_mutex_lock(&ipoib_mp_lock);
	priv->closing = true;
	pthread_mutex_unlock(&ipoib_mp_lock);
}

int
ipoib_secondary_admit(const char *name)
{
	struct ipoib_mp_req req = { .op = IPOIB_MP_ATTACH };
	int ret;

	strlcpy(req.name, name, sizeof(req.name));
	pthread_mutex_lock(&ipoib_mp_lock);
	ret = ipoib_mp_serve(&req);
	pthread_mutex_unlock(&ipoib_mp_lock);
	return ret;
}

/* ---- secondary ---------------------------------------------------------- */

static int
ipoib_mp_call(const struct rte_eth_dev *dev, uint32_t op, void *buf,
	      uint32_t n)
{
	struct timespec ts = { .tv_sec = IPOIB_MP_TIMEOUT_S };
	struct rte_mp_reply reply = { 0 };
	struct rte_mp_msg msg;
	struct ipoib_mp_req req = {
		.op = op,
		.n = n,
		.buf = (uintptr_t)buf,
	};
	int ret;

	memset(&msg, 0, sizeof(msg));
	strlcpy(msg.name, IPOIB_MP_NAME, sizeof(msg.name));
	strlcpy(req.name, dev->data->name, sizeof(req.name));
	memcpy(msg.param, &req, sizeof(req));
	msg.len_param = sizeof(req);
	if (rte_mp_request_sync(&msg, &reply, &ts) != 0 ||
	    reply.nb_received != 1) {
		IPOIB_LOG(ERR, "%s: the primary process did not answer",
			  dev->data->name);
		free(reply.msgs);
		return -EIO;
	}
	memcpy(&ret, reply.msgs[0].param, sizeof(ret));
	free(reply.msgs);
	return ret;
}

static int
ipoib_sec_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct rte_eth_stats *buf = rte_zmalloc("ipoib_mp", sizeof(*buf), 0);
	int ret;

	if (buf == NULL)
		return -ENOMEM;
	ret = ipoib_mp_call(dev, IPOIB_MP_STATS, buf, 1);
	if (ret == 0)
		*stats = *buf;
	rte_free(buf);
	return ret;
}

static int
ipoib_sec_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs,
		     unsigned int n)
{
	int nb = ipoib_xstats_get_names(dev, NULL, 0);
	struct rte_eth_xstat *buf;
	int ret;

	if (xs == NULL || n < (unsigned int)nb)
		return nb;
	buf = rte_zmalloc("ipoib_mp", nb * sizeof(*buf), 0);
	if (buf == NULL)
		return -ENOMEM;
	ret = ipoib_mp_call(dev, IPOIB_MP_XSTATS, buf, nb);
	if (ret == nb)
		memcpy(xs, buf, nb * sizeof(*buf));
	rte_free(buf);
	return ret == nb ? nb : (ret < 0 ? ret : -EIO);
}

static int
ipoib_sec_stats_reset(struct rte_eth_dev *dev)
{
	return ipoib_mp_call(dev, IPOIB_MP_RESET, NULL, 0);
}

/* The primary keeps the link status in the port's shared data. */
static int
ipoib_sec_link_update(struct rte_eth_dev *dev, int wait)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wait);
	return 0;
}

static int
ipoib_sec_close(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;	/* ethdev forgets the port in this process only */
}

static int
ipoib_sec_burst_mode_get(struct rte_eth_dev *dev, uint16_t qid,
			 struct rte_eth_burst_mode *mode)
{
	const struct ipoib_priv *priv = dev->data->dev_private;

	RTE_SET_USED(qid);
	snprintf(mode->info, sizeof(mode->info), "%s, in the primary process",
		 !dev->data->dev_started ? "stopped" :
		 priv->srq ? "SRQ" : "non-SRQ");
	return 0;
}

static const struct eth_dev_ops ipoib_sec_ops = {
	.dev_close = ipoib_sec_close,
	.dev_infos_get = ipoib_dev_infos_get,
	.link_update = ipoib_sec_link_update,
	.promiscuous_enable = ipoib_promiscuous_enable,
	.promiscuous_disable = ipoib_promiscuous_disable,
	.stats_get = ipoib_sec_stats_get,
	.stats_reset = ipoib_sec_stats_reset,
	.xstats_get = ipoib_sec_xstats_get,
	.xstats_get_names = ipoib_xstats_get_names,
	.xstats_reset = ipoib_sec_stats_reset,
	.rxq_info_get = ipoib_rxq_info_get,
	.txq_info_get = ipoib_txq_info_get,
	.rx_burst_mode_get = ipoib_sec_burst_mode_get,
	.tx_burst_mode_get = ipoib_sec_burst_mode_get,
	.rss_hash_conf_get = ipoib_rss_hash_conf_get,	/* data only */
};

/*
 * A burst in a secondary: said once per port. The queue's pointers to
 * the primary's process are not followed; the port is found by its
 * private data, which is shared.
 */
static void
ipoib_sec_burst_refused(const struct ipoib_priv *priv, const char *what)
{
	static uint8_t said[RTE_MAX_ETHPORTS];
	uint16_t port;

	rte_errno = ENOTSUP;
	for (port = 0; port < RTE_MAX_ETHPORTS; port++)
		if (rte_eth_devices[port].data != NULL &&
		    rte_eth_devices[port].data->dev_private == priv)
			break;
	if (port == RTE_MAX_ETHPORTS ||
	    __atomic_exchange_n(&said[port], 1, __ATOMIC_RELAXED))
		return;
	IPOIB_LOG(ERR, "port %u: %s in a secondary process: the datapath of "
		  "net_ipoibcm runs in the primary only; it returns 0", port,
		  what);
}

static uint16_t
ipoib_sec_rx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	const struct ipoib_rxq *rxq = q;

	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	if (rxq != NULL)
		ipoib_sec_burst_refused(rxq->priv, "rx_burst");
	return 0;
}

static uint16_t
ipoib_sec_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	const struct ipoib_txq *txq = q;

	RTE_SET_USED(pkts);
	RTE_SET_USED(n);
	if (txq != NULL)
		ipoib_sec_burst_refused(txq->priv, "tx_burst");
	return 0;
}

int
ipoib_secondary_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev);
	struct rte_eth_dev *dev;
	int ret;

	dev = rte_eth_dev_attach_secondary(name);
	if (dev == NULL) {
		IPOIB_LOG(ERR, "%s: the primary process has no such port "
			  "(closed, or not probed there)", name);
		return -ENODEV;
	}
	dev->dev_ops = &ipoib_sec_ops;
	dev->device = &vdev->device;
	ret = ipoib_mp_call(dev, IPOIB_MP_ATTACH, NULL, 0);
	if (ret < 0) {
		IPOIB_LOG(ERR, "%s: the primary process refused the attach: "
			  "%s", name, ret == -ENODEV ?
			  "the port is closing" : strerror(-ret));
		rte_eth_dev_release_port(dev);
		return ret;
	}
	dev->rx_pkt_burst = ipoib_sec_rx_burst;
	dev->tx_pkt_burst = ipoib_sec_tx_burst;
	rte_eth_dev_probing_finish(dev);
	IPOIB_LOG(INFO, "%s: attached as port %u of a secondary process", name,
		  dev->data->port_id);
	return 0;
}
