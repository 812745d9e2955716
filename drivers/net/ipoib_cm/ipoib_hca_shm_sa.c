/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * The shm transport's subnet administrator calls: the broadcast group's
 * join and path records, both answered later (shm_sa_poll()).
 */

#include <string.h>

#include <rte_common.h>

#include "ipoib_hca_shm.h"

/*
 * The join names what Linux's broadcast join names (ipoib_multicast.c,
 * ipoib_mcast_join(): MGID, port GID, P_Key, JoinState), so it joins the
 * group as the SA made it; the answer brings the group's Q_Key and MTU.
 */
int
ipoib_shm_mc_join(struct ipoib_hca *hca, const uint8_t *mgid, uint16_t pkey)
{
	struct shm_sa_mcmember rec = {
		.comp_mask = SHM_SA_MC_PKEY,
		.pkey = pkey,
		.join_state = SHM_SA_JOIN_FULL,
	};

	memcpy(rec.mgid, mgid, IPOIB_GID_LEN);
	return shm_sa_mc_join(hca->port, &rec, 0);
}

/*
 * The SA's answers to this port, put aside by kind: joins (one at a time)
 * and path records (up to SHM_SA_MAX_PENDING outstanding, so as many
 * answers) are asked for by different calls.
 */
static void
ipoib_shm_sa_sort(struct ipoib_hca *hca)
{
	struct shm_sa_event ev[16];
	int n, i;

	do {
		n = shm_sa_poll(hca->port, ev, RTE_DIM(ev));
		for (i = 0; i < n; i++) {
			if (ev[i].op == SHM_SA_PATH_GET) {
				if (hca->nr_sa_paths < RTE_DIM(hca->sa_paths))
					hca->sa_paths[hca->nr_sa_paths++] =
						ev[i];
			} else if (ev[i].op == SHM_SA_MC_JOIN) {
				hca->sa_join = ev[i];
				hca->has_sa_join = true;
			}
		}
	} while (n == (int)RTE_DIM(ev));
}

int
ipoib_shm_mc_join_poll(struct ipoib_hca *hca, struct ipoib_mc_rec *rec)
{
	const struct shm_sa_event *ev = &hca->sa_join;

	ipoib_shm_sa_sort(hca);
	if (!hca->has_sa_join)
		return 0;
	hca->has_sa_join = false;
	if (ev->status < 0)
		return ev->status;
	rec->qkey = ev->mc.qkey;
	rec->mtu = ev->mc.mtu;
	rec->mlid = ev->mc.mlid;
	return 1;
}

int
ipoib_shm_path_query(struct ipoib_hca *hca, const uint8_t *dgid,
		     uint16_t pkey, uint64_t cookie)
{
	return shm_sa_path_query(hca->port, dgid, pkey, cookie);
}

int
ipoib_shm_path_poll(struct ipoib_hca *hca, struct ipoib_path_rec *rec, int n)
{
	int k;

	ipoib_shm_sa_sort(hca);
	for (k = 0; k < n && hca->nr_sa_paths > 0; k++) {
		const struct shm_sa_event *ev =
			&hca->sa_paths[--hca->nr_sa_paths];

		rec[k].cookie = ev->cookie;
		rec[k].status = ev->status;
		rec[k].dlid = ev->path.dlid;
		rec[k].sl = ev->path.sl;
	}
	return k;
}
