/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_MCAST_H
#define IPOIB_MCAST_H

/*
 * Multicast membership in Ethernet emulation: which IPoIB groups (MGIDs,
 * RFC 4391 s4) the port's UD QP receives, and why.
 *
 * A group is joined for one or more reasons and left (detached) when none
 * remains: the port's own groups (IPv4 broadcast, IPv6 all-nodes), the
 * application's rte_eth_dev_set_mc_addr_list(), the IGMP/MLD reports it
 * sends (snooped on transmit, as a switch does), the solicited-node group
 * of every IPv6 address its Neighbor Discovery uses, and, with
 * allmulticast, every group it sends to.
 *
 * Threads: joins and leaves are control work. The datapath hands what it
 * snooped to the control context through a ring (ipoib_mcast_snoop.c);
 * what it cannot hand over is counted. The control thread applies the
 * requests in its rounds; the ethdev operations apply theirs under
 * ctrl_lock, which serialises them with the thread's rounds.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_seqlock.h>

#include "ipoib_wire.h"

struct ipoib_priv;
struct ipoib_txq;
struct rte_eth_dev;
struct rte_mbuf;
struct rte_ring;
struct rte_tel_data;

#define IPOIB_MC_GROUPS_MAX	64	/* groups the port receives at once */
#define IPOIB_MC_TRACK_MAX	128	/* groups wanted, joined or refused */
#define IPOIB_MC_LIST_MAX	32	/* entries of set_mc_addr_list() */
#define IPOIB_MC_SEEN_MAX	64	/* IP groups named by reports */
#define IPOIB_MC_RING		512	/* datapath -> control requests */

/* Why the port is in a group. */
#define IPOIB_MC_R_PORT		0x01	/* broadcast, all-nodes: always */
#define IPOIB_MC_R_LIST		0x02	/* set_mc_addr_list() */
#define IPOIB_MC_R_REPORT	0x04	/* the application's IGMP/MLD report */
#define IPOIB_MC_R_ND		0x08	/* solicited-node of an address in use */
#define IPOIB_MC_R_TX		0x10	/* allmulticast: a group sent to */
#define IPOIB_MC_R_NEW		0x20	/* set_mc_addr_list() being applied */

/* Kinds of group frames are counted by (rx_mcast_*_packets). */
enum ipoib_mc_kind {
	IPOIB_MC_K_BCAST,	/* the IPv4 broadcast group */
	IPOIB_MC_K_IPV4,	/* other IPv4 groups */
	IPOIB_MC_K_ALLNODES,	/* IPv6 ff02::1 */
	IPOIB_MC_K_SOLICITED,	/* IPv6 ff02::1:ffXX:XXXX */
	IPOIB_MC_K_IPV6,	/* other IPv6 groups */
	IPOIB_MC_KINDS,
};

/* A request of the datapath: join or leave an IP group, for a reason. */
enum ipoib_mc_op {
	IPOIB_MC_JOIN = 1,
	IPOIB_MC_LEAVE,
};

struct ipoib_mc_req {
	uint8_t op;		/* enum ipoib_mc_op */
	uint8_t reason;		/* IPOIB_MC_R_* */
	uint8_t v6;		/* group is IPv6; else IPv4 in group[0..3] */
	uint8_t pad;
	uint8_t group[16];	/* network order */
};

struct ipoib_mc_group {
	uint8_t mgid[IPOIB_GID_LEN];
	uint8_t reasons;	/* IPOIB_MC_R_*; none: left, entry freed */
	uint8_t attached;	/* the UD QP receives it */
	uint8_t refused;	/* join refused; tried again for a new reason */
};

/* An IP group named by a report: resolves ambiguous MACs. */
struct ipoib_mc_seen {
	uint8_t group[16];
	uint8_t v6;
};

/*
 * The groups and the reasons the datapath may read without a lock, to
 * ask only for what is not known: a copy under a sequence lock.
 */
struct ipoib_mc_pub {
	rte_seqlock_t lock;
	uint32_t nr;
	uint32_t gen;				/* bumped at every change */
	uint64_t key[IPOIB_MC_TRACK_MAX][2];	/* MGID bytes 0-7, 8-15 */
	uint64_t reasons[IPOIB_MC_TRACK_MAX];
};

/*
 * The last group a transmit queue asked to join: frames to a group the
 * control context has not joined yet ask once, not once per frame.
 */
struct ipoib_mc_last {
	uint64_t key[2];
	uint32_t gen;		/* of the published table when asked */
	uint8_t reason;
};

struct ipoib_mc {
	/* control context (ctrl_lock) */
	struct ipoib_mc_group g[IPOIB_MC_TRACK_MAX];
	unsigned int nr;
	unsigned int nr_attached;
	struct rte_ether_addr list[IPOIB_MC_LIST_MAX];
	unsigned int nr_list;
	struct ipoib_mc_seen seen[IPOIB_MC_SEEN_MAX];
	unsigned int nr_seen;
	unsigned int seen_next;		/* oldest, replaced next */
	struct rte_ring *req;		/* from the datapath */
	/* read by the datapath */
	uint8_t allmulti;		/* atomic */
	struct ipoib_mc_pub pub;
};

/*
 * Probe and reset, before the UD QP is made: priv->qkey and priv->ud_mtu
 * from the broadcast group's MCMemberRecord (ipoib_mcast.c says how).
 */
void ipoib_mcast_bcast_join(struct ipoib_priv *priv);
/* Port open/close (probe, reset, close): the port's own groups. */
int ipoib_mcast_open(struct ipoib_priv *priv);
void ipoib_mcast_close(struct ipoib_priv *priv);

/* Control context: apply the datapath's requests; true if any. */
bool ipoib_mcast_ctrl(struct ipoib_priv *priv);

/* ethdev operations */
int ipoib_set_mc_addr_list(struct rte_eth_dev *dev,
			   struct rte_ether_addr *list, uint32_t n);
int ipoib_allmulticast_enable(struct rte_eth_dev *dev);
int ipoib_allmulticast_disable(struct rte_eth_dev *dev);
/* Groups the port receives now (xstat mcast_groups); ctrl_lock held. */
unsigned int ipoib_mcast_nr_joined(const struct ipoib_priv *priv);
/* Telemetry: the groups, joined or refused, and why; ctrl_lock held. */
void ipoib_mcast_tel(const struct ipoib_priv *priv, struct rte_tel_data *d);

/*
 * The MGIDs an Ethernet multicast MAC stands for, at most max: RFC 4391
 * maps IP groups, and a MAC carries fewer bits than a group (IPv4: 23 of
 * 28, IPv6: 32 of 80). Groups seen in the port's reports resolve it;
 * otherwise the IPv4 group in 224.0.0.0/8 and the IPv6 group ff02::/16
 * with the MAC's bits (ff02::1:ffXX:XXXX for 33:33:ff:XX:XX:XX) are meant.
 * Returns how many, or -EINVAL for a MAC with no IPoIB group.
 */
int ipoib_mcast_mac_groups(const struct ipoib_priv *priv,
			   const struct rte_ether_addr *mac,
			   uint8_t (*mgid)[IPOIB_GID_LEN], unsigned int max);

/* Datapath: is the group known with every reason in reasons? */
bool ipoib_mcast_known(struct ipoib_mc *mc, const uint8_t *mgid,
		       uint8_t reasons);

/*
 * Datapath (tx, before encapsulation): what the frame says about the
 * application's groups; mcast_dst: it goes to a group.
 */
void ipoib_mcast_snoop(struct ipoib_txq *txq, const struct rte_mbuf *m,
		       bool mcast_dst);

/* The kind of group an MGID is (receive counters). */
static inline enum ipoib_mc_kind
ipoib_mcast_kind(const uint8_t *mgid)
{
	static const uint8_t zero[10];
	uint16_t sig = (uint16_t)(mgid[2] << 8 | mgid[3]);

	if (sig == IPOIB_MGID_SIG_IPV4)
		return mgid[12] == 0xff && mgid[13] == 0xff &&
		       mgid[14] == 0xff && mgid[15] == 0xff ?
		       IPOIB_MC_K_BCAST : IPOIB_MC_K_IPV4;
	if (sig == IPOIB_MGID_SIG_IPV6 && memcmp(&mgid[6], zero, 9) == 0 &&
	    mgid[15] == 1)
		return IPOIB_MC_K_ALLNODES;
	if (sig == IPOIB_MGID_SIG_IPV6 && memcmp(&mgid[6], zero, 4) == 0 &&
	    mgid[10] == 0 && mgid[11] == 1 && mgid[12] == 0xff)
		return IPOIB_MC_K_SOLICITED;
	return IPOIB_MC_K_IPV6;
}

#endif /* IPOIB_MCAST_H */
