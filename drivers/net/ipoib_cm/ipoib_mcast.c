/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Multicast membership (control context): the groups the UD QP receives,
 * each with the reasons it is wanted, joined when a reason appears and
 * left when the last one goes. ipoib_mcast.h says who asks and why.
 *
 * Every change runs in the control context: the control thread's round
 * (ipoib_mcast_ctrl(), the datapath's requests) or an ethdev operation
 * under ctrl_lock. A change joins what is newly wanted first, then leaves
 * what nobody wants, then publishes the table for the datapath.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "ipoib_cm.h"
#include "ipoib_log.h"

static const uint8_t ipoib_all_nodes[16] = IPOIB_IPV6_ALL_NODES;

static const char *
mc_name(const uint8_t *mgid, char *buf, size_t len)
{
	/* a GID is written as an IPv6 address */
	if (inet_ntop(AF_INET6, mgid, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

static uint16_t
mc_port(const struct ipoib_priv *priv)
{
	return priv->eth_dev->data->port_id;
}

static struct ipoib_mc_group *
mc_find(struct ipoib_mc *mc, const uint8_t *mgid)
{
	unsigned int i;

	for (i = 0; i < mc->nr; i++)
		if (memcmp(mc->g[i].mgid, mgid, IPOIB_GID_LEN) == 0)
			return &mc->g[i];
	return NULL;
}

/* The entry of a group, made if new; NULL (counted) when none is free. */
static struct ipoib_mc_group *
mc_get(struct ipoib_priv *priv, const uint8_t *mgid)
{
	struct ipoib_mc *mc = priv->mc;
	struct ipoib_mc_group *g = mc_find(mc, mgid);
	char name[INET6_ADDRSTRLEN];

	if (g != NULL)
		return g;
	if (mc->nr == IPOIB_MC_TRACK_MAX) {
		priv->cstats.mc_joins_refused++;
		IPOIB_LOG_RATELIMIT(WARNING, "port %u: group %s not joined: "
				    "the port tracks %u groups at most",
				    mc_port(priv),
				    mc_name(mgid, name, sizeof(name)),
				    IPOIB_MC_TRACK_MAX);
		return NULL;
	}
	g = &mc->g[mc->nr++];
	memset(g, 0, sizeof(*g));
	memcpy(g->mgid, mgid, IPOIB_GID_LEN);
	return g;
}

/* Give g a reason; a group refused before is tried again. */
static void
mc_want(struct ipoib_mc_group *g, uint8_t reason)
{
	if (g->reasons & reason)
		return;
	g->reasons |= reason;
	g->refused = 0;
}

static void
mc_attach(struct ipoib_priv *priv, struct ipoib_mc_group *g)
{
	struct ipoib_mc *mc = priv->mc;
	char name[INET6_ADDRSTRLEN];
	int ret = -ENOSPC;

	if (mc->nr_attached < IPOIB_MC_GROUPS_MAX)
		ret = priv->ops->mcast_attach(priv->ud_qp, g->mgid);
	if (ret == 0) {
		g->attached = 1;
		mc->nr_attached++;
		/* to send to it too: made here, never by an lcore */
		ipoib_mcast_ah(priv, g->mgid);
		priv->cstats.mc_joins++;
		IPOIB_LOG(DEBUG, "port %u: joined %s", mc_port(priv),
			  mc_name(g->mgid, name, sizeof(name)));
		return;
	}
	g->refused = 1;
	priv->cstats.mc_joins_refused++;
	IPOIB_LOG(WARNING, "port %u: cannot join group %s: %s%s", mc_port(priv),
		  mc_name(g->mgid, name, sizeof(name)), strerror(-ret),
		  mc->nr_attached < IPOIB_MC_GROUPS_MAX ? "" :
		  " (the port receives 64 groups at most)");
}

static void
mc_attach_wanted(struct ipoib_priv *priv)
{
	struct ipoib_mc *mc = priv->mc;
	unsigned int i;

	for (i = 0; i < mc->nr; i++)
		if (mc->g[i].reasons != 0 && !mc->g[i].attached &&
		    !mc->g[i].refused)
			mc_attach(priv, &mc->g[i]);
}

/* Leave the groups nobody wants, and forget them. */
static void
mc_detach_unwanted(struct ipoib_priv *priv)
{
	struct ipoib_mc *mc = priv->mc;
	char name[INET6_ADDRSTRLEN];
	unsigned int i = 0;

	while (i < mc->nr) {
		struct ipoib_mc_group *g = &mc->g[i];

		if (g->reasons != 0) {
			i++;
			continue;
		}
		if (g->attached) {
			int ret = priv->ops->mcast_detach(priv->ud_qp,
							  g->mgid);

			if (ret < 0)
				IPOIB_LOG(WARNING, "port %u: leaving %s: %s",
					  mc_port(priv),
					  mc_name(g->mgid, name, sizeof(name)),
					  strerror(-ret));
			mc->nr_attached--;
			priv->cstats.mc_leaves++;
			IPOIB_LOG(DEBUG, "port %u: left %s", mc_port(priv),
				  mc_name(g->mgid, name, sizeof(name)));
		}
		*g = mc->g[--mc->nr];
	}
}

/* The table as the datapath reads it (ipoib_mcast_known()). */
static void
mc_publish(struct ipoib_mc *mc)
{
	struct ipoib_mc_pub *pub = &mc->pub;
	unsigned int i;

	rte_seqlock_write_lock(&pub->lock);
	for (i = 0; i < mc->nr; i++) {
		uint64_t k[2];

		memcpy(k, mc->g[i].mgid, sizeof(k));
		__atomic_store_n(&pub->key[i][0], k[0], __ATOMIC_RELAXED);
		__atomic_store_n(&pub->key[i][1], k[1], __ATOMIC_RELAXED);
		__atomic_store_n(&pub->reasons[i], mc->g[i].reasons,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&pub->nr, mc->nr, __ATOMIC_RELAXED);
	__atomic_store_n(&pub->gen, pub->gen + 1, __ATOMIC_RELAXED);
	rte_seqlock_write_unlock(&pub->lock);
}

static void
mc_sync(struct ipoib_priv *priv)
{
	mc_attach_wanted(priv);
	mc_detach_unwanted(priv);
	mc_publish(priv->mc);
}

bool
ipoib_mcast_known(struct ipoib_mc *mc, const uint8_t *mgid, uint8_t reasons)
{
	struct ipoib_mc_pub *pub = &mc->pub;
	uint64_t k[2];
	uint32_t sn, n, i;
	bool found;

	memcpy(k, mgid, sizeof(k));
	do {
		sn = rte_seqlock_read_begin(&pub->lock);
		found = false;
		n = RTE_MIN(__atomic_load_n(&pub->nr, __ATOMIC_RELAXED),
			    (uint32_t)IPOIB_MC_TRACK_MAX);
		for (i = 0; i < n; i++) {
			if (__atomic_load_n(&pub->key[i][0],
					    __ATOMIC_RELAXED) != k[0] ||
			    __atomic_load_n(&pub->key[i][1],
					    __ATOMIC_RELAXED) != k[1])
				continue;
			found = (__atomic_load_n(&pub->reasons[i],
						 __ATOMIC_RELAXED) & reasons) ==
				reasons;
			break;
		}
	} while (rte_seqlock_read_retry(&pub->lock, sn));
	return found;
}

/* An IP group a report named: it resolves ambiguous MACs later. */
static void
mc_seen_add(struct ipoib_mc *mc, const struct ipoib_mc_req *r)
{
	unsigned int i;

	for (i = 0; i < mc->nr_seen; i++)
		if (mc->seen[i].v6 == r->v6 &&
		    memcmp(mc->seen[i].group, r->group, 16) == 0)
			return;
	i = mc->nr_seen < IPOIB_MC_SEEN_MAX ? mc->nr_seen++ :
	    mc->seen_next++ % IPOIB_MC_SEEN_MAX;
	memcpy(mc->seen[i].group, r->group, 16);
	mc->seen[i].v6 = r->v6;
}

static void
mc_mgid_of(const struct ipoib_priv *priv, bool v6, const uint8_t *group,
	   uint8_t *mgid)
{
	rte_be32_t v4;

	if (v6) {
		ipoib_mgid_ipv6(mgid, priv->pkey, group);
		return;
	}
	memcpy(&v4, group, sizeof(v4));
	ipoib_mgid_ipv4(mgid, priv->pkey, v4);
}

static void
mc_request(struct ipoib_priv *priv, const struct ipoib_mc_req *r)
{
	struct ipoib_mc *mc = priv->mc;
	uint8_t mgid[IPOIB_GID_LEN];
	struct ipoib_mc_group *g;

	mc_mgid_of(priv, r->v6, r->group, mgid);
	if (r->op == IPOIB_MC_JOIN) {
		if (r->reason == IPOIB_MC_R_REPORT)
			mc_seen_add(mc, r);
		g = mc_get(priv, mgid);
		if (g != NULL)
			mc_want(g, r->reason);
		return;
	}
	/* a leave report: the stack wants the group no more */
	g = mc_find(mc, mgid);
	if (g != NULL)
		g->reasons &= ~(IPOIB_MC_R_REPORT | IPOIB_MC_R_ND);
}

bool
ipoib_mcast_ctrl(struct ipoib_priv *priv)
{
	struct ipoib_mc_req r[32];
	unsigned int n, i, total = 0;

	if (priv->mc == NULL)
		return false;
	do {
		n = rte_ring_sc_dequeue_burst_elem(priv->mc->req, r, sizeof(r[0]),
						   RTE_DIM(r), NULL);
		for (i = 0; i < n; i++)
			mc_request(priv, &r[i]);
		total += n;
	} while (n == RTE_DIM(r));
	if (total > 0)
		mc_sync(priv);
	return total > 0;
}

int
ipoib_mcast_mac_groups(const struct ipoib_priv *priv,
		       const struct rte_ether_addr *mac,
		       uint8_t (*mgid)[IPOIB_GID_LEN], unsigned int max)
{
	const struct ipoib_mc *mc = priv->mc;
	const uint8_t *b = mac->addr_bytes;
	uint8_t group[16] = { 0 };
	unsigned int i, k = 0;
	bool v6;

	if (rte_is_broadcast_ether_addr(mac)) {
		ipoib_mgid_bcast(mgid[0], priv->pkey);
		return 1;
	}
	if (b[0] == 0x01 && b[1] == 0x00 && b[2] == 0x5e && !(b[3] & 0x80))
		v6 = false;	/* RFC 1112 s6.4: 23 bits of the group */
	else if (b[0] == 0x33 && b[1] == 0x33)
		v6 = true;	/* RFC 2464 s7: the group's last 32 bits */
	else
		return -EINVAL;
	for (i = 0; i < mc->nr_seen && k < max; i++) {
		const uint8_t *s = mc->seen[i].group;

		if (mc->seen[i].v6 != v6 ||
		    (v6 ? memcmp(&s[12], &b[2], 4) != 0 :
		     ((s[1] & 0x7f) != b[3] || s[2] != b[4] || s[3] != b[5])))
			continue;
		mc_mgid_of(priv, v6, s, mgid[k++]);
	}
	if (k > 0)
		return (int)k;
	if (v6) {
		group[0] = 0xff;
		group[1] = 0x02;
		if (b[2] == 0xff)
			group[11] = 0x01;	/* solicited-node */
		memcpy(&group[12], &b[2], 4);
	} else {
		group[0] = 224;
		memcpy(&group[1], &b[3], 3);
	}
	mc_mgid_of(priv, v6, group, mgid[0]);
	return 1;
}

/* The list's groups get R_NEW; false if one has no entry left. */
static int
mc_list_mark(struct ipoib_priv *priv, const struct rte_ether_addr *list,
	     uint32_t n)
{
	uint8_t mgid[IPOIB_MC_SEEN_MAX][IPOIB_GID_LEN];
	uint32_t i;
	int k, j;

	for (i = 0; i < n; i++) {
		k = ipoib_mcast_mac_groups(priv, &list[i], mgid,
					   IPOIB_MC_SEEN_MAX);
		if (k < 0) {
			IPOIB_LOG(ERR, "port %u: set_mc_addr_list: "
				  RTE_ETHER_ADDR_PRT_FMT " is not an IPv4 "
				  "(01:00:5e:00:00:00/25) or IPv6 "
				  "(33:33:00:00:00:00/16) multicast MAC: "
				  "IPoIB has no group for it; the list in use "
				  "is kept", mc_port(priv),
				  RTE_ETHER_ADDR_BYTES(&list[i]));
			return -EINVAL;
		}
		for (j = 0; j < k; j++) {
			struct ipoib_mc_group *g = mc_get(priv, mgid[j]);

			if (g == NULL)
				return -ENOSPC;
			mc_want(g, IPOIB_MC_R_NEW);
		}
	}
	return 0;
}

int
ipoib_set_mc_addr_list(struct rte_eth_dev *dev, struct rte_ether_addr *list,
		       uint32_t n)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_mc *mc = priv->mc;
	unsigned int i;
	int ret;

	if (mc == NULL)
		return -EIO;	/* the transport failed: reset first */
	pthread_mutex_lock(&priv->ctrl_lock);
	if (n > IPOIB_MC_LIST_MAX) {
		IPOIB_LOG(ERR, "port %u: set_mc_addr_list: %u addresses, more "
			  "than the %u a port takes; the list in use is kept",
			  mc_port(priv), n, IPOIB_MC_LIST_MAX);
		ret = -ENOSPC;
		goto refused;
	}
	ret = mc_list_mark(priv, list, n);
	if (ret == 0) {
		mc_attach_wanted(priv);
		for (i = 0; i < mc->nr; i++)
			if ((mc->g[i].reasons & IPOIB_MC_R_NEW) &&
			    !mc->g[i].attached)
				ret = -ENOSPC;
		if (ret < 0)
			IPOIB_LOG(ERR, "port %u: set_mc_addr_list: not every "
				  "group could be joined; the list in use is "
				  "kept", mc_port(priv));
	}
	/* the new list replaces the old one, or nothing changes */
	for (i = 0; i < mc->nr; i++) {
		struct ipoib_mc_group *g = &mc->g[i];

		if (ret == 0)
			g->reasons = (g->reasons & ~IPOIB_MC_R_LIST) |
				     ((g->reasons & IPOIB_MC_R_NEW) ?
				      IPOIB_MC_R_LIST : 0);
		g->reasons &= ~IPOIB_MC_R_NEW;
	}
	mc_detach_unwanted(priv);
	mc_publish(mc);
	if (ret == 0) {
		if (n > 0)	/* the list may be NULL when empty */
			memcpy(mc->list, list, n * sizeof(*list));
		mc->nr_list = n;
		pthread_mutex_unlock(&priv->ctrl_lock);
		return 0;
	}
refused:
	priv->cstats.mc_list_refused++;
	pthread_mutex_unlock(&priv->ctrl_lock);
	return ret;
}

int
ipoib_allmulticast_enable(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;

	if (priv->mc == NULL)
		return -EIO;
	__atomic_store_n(&priv->mc->allmulti, 1, __ATOMIC_RELEASE);
	return 0;
}

/* The groups joined only because the application sent to them go. */
int
ipoib_allmulticast_disable(struct rte_eth_dev *dev)
{
	struct ipoib_priv *priv = dev->data->dev_private;
	struct ipoib_mc *mc = priv->mc;
	unsigned int i;

	if (mc == NULL)
		return -EIO;
	pthread_mutex_lock(&priv->ctrl_lock);
	__atomic_store_n(&mc->allmulti, 0, __ATOMIC_RELEASE);
	/* requests made before are applied first: none is left behind */
	ipoib_mcast_ctrl(priv);
	for (i = 0; i < mc->nr; i++)
		mc->g[i].reasons &= ~IPOIB_MC_R_TX;
	mc_detach_unwanted(priv);
	mc_publish(mc);
	pthread_mutex_unlock(&priv->ctrl_lock);
	return 0;
}

unsigned int
ipoib_mcast_nr_joined(const struct ipoib_priv *priv)
{
	return priv->mc != NULL ? priv->mc->nr_attached : 0;
}

/* Telemetry /ipoibcm/mcast: each group, joined or not, and why. */
void
ipoib_mcast_tel(const struct ipoib_priv *priv, struct rte_tel_data *d)
{
	static const char *const why[] = {
		"port", "list", "report", "nd", "tx",
	};
	const struct ipoib_mc *mc = priv->mc;
	struct rte_tel_data *groups;
	char line[RTE_TEL_MAX_STRING_LEN];
	unsigned int i, b;

	rte_tel_data_start_dict(d);
	if (mc == NULL)
		return;
	rte_tel_data_add_dict_uint(d, "allmulticast",
				  __atomic_load_n(&mc->allmulti,
						  __ATOMIC_RELAXED));
	rte_tel_data_add_dict_uint(d, "joined", mc->nr_attached);
	groups = rte_tel_data_alloc();
	if (groups == NULL)
		return;
	rte_tel_data_start_array(groups, RTE_TEL_STRING_VAL);
	for (i = 0; i < mc->nr; i++) {
		const struct ipoib_mc_group *g = &mc->g[i];
		size_t off;

		mc_name(g->mgid, line, sizeof(line));
		off = strlen(line);
		off += snprintf(line + off, sizeof(line) - off, " %s",
				g->attached ? "joined" : g->refused ?
				"refused" : "wanted");
		for (b = 0; b < RTE_DIM(why) && off < sizeof(line); b++)
			if (g->reasons & (1u << b))
				off += snprintf(line + off, sizeof(line) - off,
						" %s", why[b]);
		rte_tel_data_add_array_string(groups, line);
	}
	if (rte_tel_data_add_dict_container(d, "groups", groups, 0) < 0)
		rte_tel_data_free(groups);
}

/*
 * How long the probe waits for the SA's answer to the broadcast join:
 * the timeout of Linux's MCMemberRecord queries (core/multicast.c,
 * mcast_work_handler(): 3000 ms).
 */
#define IPOIB_SA_JOIN_NS	(3000 * IPOIB_NS_PER_MS)

/* The record's fields the port takes, or why they are not taken. */
static int
mc_bcast_rec_check(const struct ipoib_priv *priv,
		   const struct ipoib_mc_rec *rec)
{
	if (rec->mtu != 0 && !ipoib_ib_mtu_valid(rec->mtu)) {
		IPOIB_LOG(WARNING, "port %u: the broadcast group's MTU %u is "
			  "not an IB MTU", mc_port(priv), rec->mtu);
		return -EPROTO;
	}
	return 0;
}

/*
 * Probe and reset, before the UD QP exists: join the IPv4 broadcast group
 * through the subnet administrator and take the port's Q_Key and UD MTU
 * from its MCMemberRecord, as Linux does (ipoib_multicast.c,
 * ipoib_mcast_join_finish(): priv->qkey and the broadcast MTU from the
 * broadcast group's record; ipoib_mcast_join_task() keeps the carrier
 * off until then). The UD QP is then made with that Q_Key, so the port
 * sends nothing before the join has completed. The group's MTU is capped
 * by the port's. A transport without an SA, a refusal or no answer in
 * IPOIB_SA_JOIN_NS leaves the defaults (Q_Key 0x0b1b, the port's MTU):
 * logged and counted in mcast_joins_refused; the port still comes up, as
 * the groups are then attached without a join, as before the SA existed.
 */
void
ipoib_mcast_bcast_join(struct ipoib_priv *priv)
{
	const struct ipoib_hca_ops *ops = priv->ops;
	uint16_t mtu = priv->attr.ib_mtu;
	uint8_t mgid[IPOIB_GID_LEN];
	struct ipoib_mc_rec rec = { 0 };
	uint64_t deadline, now;
	int ret;

	priv->qkey = IPOIB_QKEY_DEFAULT;
	ipoib_mgid_bcast(mgid, priv->pkey);
	ret = ops->mc_join == NULL || ops->mc_join_poll == NULL ?
	      -EOPNOTSUPP : ops->mc_join(priv->hca, mgid, priv->pkey);
	if (ret == -EOPNOTSUPP) {
		IPOIB_LOG(INFO, "port %u: the %s transport asks no subnet "
			  "administrator here: Q_Key 0x%08x, UD MTU %u of the "
			  "port", mc_port(priv), ops->name, priv->qkey,
			  mtu - IPOIB_HDR_LEN);
		goto out;
	}
	deadline = ipoib_now_ns() + IPOIB_SA_JOIN_NS;
	while (ret == 0 && (ret = ops->mc_join_poll(priv->hca, &rec)) == 0) {
		now = ipoib_now_ns();
		if (now >= deadline)
			ret = -ETIMEDOUT;
		else
			ops->ctrl_wait(priv->hca, deadline - now);
	}
	if (ret > 0)
		ret = mc_bcast_rec_check(priv, &rec);
	if (ret < 0) {
		priv->cstats.mc_joins_refused++;
		IPOIB_LOG(WARNING, "port %u: the broadcast group's join "
			  "failed (%s): Q_Key 0x%08x and UD MTU %u are the "
			  "defaults, not the subnet's", mc_port(priv),
			  strerror(-ret), priv->qkey, mtu - IPOIB_HDR_LEN);
		goto out;
	}
	priv->qkey = rec.qkey;
	if (rec.mtu != 0)	/* 0: the transport could not learn it */
		mtu = RTE_MIN(mtu, rec.mtu);
	IPOIB_LOG(INFO, "port %u: broadcast group joined (MLID 0x%04x, MTU "
		  "%u): Q_Key 0x%08x, UD MTU %u", mc_port(priv), rec.mlid,
		  rec.mtu, priv->qkey, mtu - IPOIB_HDR_LEN);
out:
	priv->ud_mtu = mtu - IPOIB_HDR_LEN;
	/* its address handle now, as Linux's join does: no lcore makes it */
	ipoib_mgid_bcast(mgid, priv->pkey);
	if (ipoib_mcast_ah(priv, mgid) == NULL)
		IPOIB_LOG(WARNING, "port %u: no address handle for the "
			  "broadcast group: its first frames wait for the "
			  "control thread", mc_port(priv));
}

/* ---- sending to groups: their address handles ---------------------------- */

struct ipoib_hca_ah *
ipoib_mcast_ah_find(struct ipoib_priv *priv, const uint8_t *mgid)
{
	unsigned int i, n = __atomic_load_n(&priv->nr_mcast, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (memcmp(priv->mcast[i].mgid, mgid, IPOIB_GID_LEN) == 0)
			return priv->mcast[i].ah;
	return NULL;
}

/*
 * The AH to send to a multicast group, made on first use by the control
 * thread (a tx queue's frame to a group without one is held for it).
 */
struct ipoib_hca_ah *
ipoib_mcast_ah(struct ipoib_priv *priv, const uint8_t *mgid)
{
	struct ipoib_ah_attr aa = { .multicast = true, .dlid = 0xc000 };
	struct ipoib_hca_ah *ah = ipoib_mcast_ah_find(priv, mgid);
	unsigned int i;

	if (ah != NULL)
		return ah;
	rte_spinlock_lock(&priv->mcast_lock);
	for (i = 0; i < priv->nr_mcast; i++)
		if (memcmp(priv->mcast[i].mgid, mgid, IPOIB_GID_LEN) == 0)
			ah = priv->mcast[i].ah;
	if (ah == NULL && priv->nr_mcast < IPOIB_MCAST_MAX) {
		memcpy(aa.dgid, mgid, IPOIB_GID_LEN);
		ah = priv->ops->ah_create(priv->hca, &aa);
		if (ah != NULL) {
			struct ipoib_mcast *mc = &priv->mcast[priv->nr_mcast];

			memcpy(mc->mgid, mgid, IPOIB_GID_LEN);
			mc->ah = ah;
			/* readers see the entry complete */
			__atomic_store_n(&priv->nr_mcast, priv->nr_mcast + 1,
					 __ATOMIC_RELEASE);
		}
	}
	rte_spinlock_unlock(&priv->mcast_lock);
	return ah;
}

/* Probe and reset: broadcast (required), all-nodes (IPv6 ND). */
int
ipoib_mcast_open(struct ipoib_priv *priv)
{
	char name[RTE_RING_NAMESIZE];
	uint8_t mgid[IPOIB_GID_LEN];
	struct ipoib_mc_group *g;
	struct ipoib_mc *mc;

	mc = ipoib_mem_zmalloc(&priv->acct, IPOIB_MEM_MCAST, "ipoib_mc",
			       sizeof(*mc), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (mc == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "ipmc_%u", mc_port(priv));
	mc->req = ipoib_ring_create(&priv->acct, IPOIB_MEM_MCAST, name,
				    sizeof(struct ipoib_mc_req), IPOIB_MC_RING,
				    RING_F_SC_DEQ);
	if (mc->req == NULL) {
		ipoib_mem_free(&priv->acct, IPOIB_MEM_MCAST, mc);
		return -ENOMEM;
	}
	rte_seqlock_init(&mc->pub.lock);
	priv->mc = mc;
	ipoib_mgid_bcast(mgid, priv->pkey);
	g = mc_get(priv, mgid);
	g->reasons = IPOIB_MC_R_PORT;
	mc_attach(priv, g);
	if (!g->attached) {
		ipoib_mcast_close(priv);
		return -EIO;
	}
	ipoib_mgid_ipv6(mgid, priv->pkey, ipoib_all_nodes);
	mc_want(mc_get(priv, mgid), IPOIB_MC_R_PORT);
	mc_sync(priv);
	return 0;
}

/* Before the UD QP goes: leave every group. */
void
ipoib_mcast_close(struct ipoib_priv *priv)
{
	struct ipoib_mc *mc = priv->mc;
	unsigned int i;

	if (mc == NULL)
		return;
	for (i = 0; i < mc->nr; i++)
		if (mc->g[i].attached)
			priv->ops->mcast_detach(priv->ud_qp, mc->g[i].mgid);
	ipoib_ring_free(&priv->acct, IPOIB_MEM_MCAST, mc->req);
	priv->mc = NULL;
	ipoib_mem_free(&priv->acct, IPOIB_MEM_MCAST, mc);
}
