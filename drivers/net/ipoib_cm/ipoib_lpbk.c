/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * lpbk_mode = 1: the port receives what it sends, through the fabric, as
 * an HCA loopback does. Every frame, whatever its Ethernet destination,
 * goes as a datagram to the port's own UD QP (an address handle to the
 * port's own GID and LID) and comes back on rx queue 0, addressed to the
 * port; nothing reaches another port. Frames longer than the UD MTU
 * (IB MTU - 4) are dropped and counted (tx_drop_too_long): loopback
 * carries no connection. The mode is taken at dev_start, which installs
 * this burst; dpdk-test's pmd_perf_autotest runs a port this way.
 */

#include <errno.h>

#include "ipoib_cm.h"
#include "ipoib_eth.h"
#include "ipoib_log.h"
#include "ipoib_lpbk.h"
#include "ipoib_tx.h"

int
ipoib_lpbk_check(struct rte_eth_dev *dev)
{
	uint32_t mode = dev->data->dev_conf.lpbk_mode;

	if (mode > 1) {
		IPOIB_LOG(ERR, "port %u: lpbk_mode %u: accepted values are 0 "
			  "(off) and 1 (the port receives what it sends)",
			  dev->data->port_id, mode);
		return -EINVAL;
	}
	return 0;
}

int
ipoib_lpbk_start(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_ah_attr aa = { .dlid = priv->attr.lid };

	if (dev->data->dev_conf.lpbk_mode == 0)
		return 0;
	memcpy(aa.dgid, priv->attr.gid, IPOIB_GID_LEN);
	priv->lpbk_ah = priv->ops->ah_create(priv->hca, &aa);
	if (priv->lpbk_ah == NULL) {
		IPOIB_LOG(ERR, "port %u: lpbk_mode: no address handle to the "
			  "port itself", dev->data->port_id);
		return -ENOMEM;
	}
	IPOIB_LOG(INFO, "port %u: loopback: frames sent come back to the "
		  "port", dev->data->port_id);
	return 0;
}

void
ipoib_lpbk_stop(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	if (priv->lpbk_ah == NULL)
		return;
	priv->ops->ah_destroy(priv->lpbk_ah);
	priv->lpbk_ah = NULL;
}

/*
 * A unicast frame of the common kind (ipoib_tx_fast_encap()) is turned
 * into IPoIB in place, as on a connection: it needs no ARP or ND
 * rewriting and its destination, which loopback ignores, no group.
 */
static __rte_always_inline bool
ipoib_lpbk_fast_encap(struct rte_mbuf *m)
{
	return m->data_len >= RTE_ETHER_HDR_LEN &&
	       rte_is_unicast_ether_addr(rte_pktmbuf_mtod(m,
						const struct rte_ether_addr *)) &&
	       ipoib_tx_fast_encap(m);
}

static uint16_t
ipoib_lpbk_send(struct ipoib_txq *txq, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_priv *priv = txq->priv;
	struct ipoib_send_wr wr[IPOIB_TX_BURST];
	/* in locals: the encapsulation's stores could alias them */
	struct ipoib_hca_ah *ah = priv->lpbk_ah;
	uint32_t qpn = priv->ud_qpn, qkey = txq->ud_qkey;
	uint32_t max_len = (uint32_t)RTE_ETHER_HDR_LEN + priv->ud_mtu;
	uint32_t bytes = 0;
	uint16_t i, k = 0, sent;

	n = RTE_MIN(n, (uint16_t)IPOIB_TX_BURST);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct ipoib_tx_dst dst;
		uint32_t len = m->pkt_len;
		int ret;

		if (len > max_len) {
			ipoib_tx_drop(m, &txq->stats.drop_too_long);
			continue;
		}
		/* every destination, unicast or group, is the port itself */
		if (unlikely(!ipoib_lpbk_fast_encap(m))) {
			ret = ipoib_eth_encap(m, &priv->eth, &dst);
			if (ret < 0) {
				ipoib_tx_drop_encap(txq, m, ret);
				continue;
			}
		}
		wr[k].m = m;
		wr[k].ah = ah;
		wr[k].remote_qpn = qpn;
		wr[k].remote_qkey = qkey;
		bytes += len;
		k++;
	}
	sent = k > 0 ? txq->post_send(txq->ud_qp, wr, k) : 0;
	for (i = sent; i < k; i++)	/* UD does not refuse; never trust */
		ipoib_tx_drop(wr[i].m, &txq->stats.drop_malformed);
	IPOIB_STAT_ADD(txq->stats.ud_packets, sent);
	IPOIB_STAT_ADD(txq->stats.ud_bytes, bytes);
	IPOIB_STAT_ADD(txq->stats.bytes, bytes);
	IPOIB_STAT_ADD(txq->stats.packets, n);
	return n;
}

/* ARP and ND rewriting reads the peer table: a reader of its RCU. */
uint16_t
ipoib_tx_burst_lpbk(void *q, struct rte_mbuf **pkts, uint16_t n)
{
	struct ipoib_txq *txq = q;
	struct rte_rcu_qsbr *qsbr = txq->priv->pt.qsbr;
	uint16_t done;

	if (unlikely(__atomic_load_n(&txq->stopped, __ATOMIC_RELAXED)))
		return 0;
	ipoib_rcu_enter(qsbr, &txq->rcu);
	done = ipoib_lpbk_send(txq, pkts, n);
	ipoib_rcu_leave(qsbr, &txq->rcu);
	return done;
}
