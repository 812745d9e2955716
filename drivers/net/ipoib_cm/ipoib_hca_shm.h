/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * What the files of the shm transport share: ipoib_hca_shm.c has the
 * ops table and everything but the sends, which ipoib_hca_shm_send.c has,
 * and the subnet administrator, which ipoib_hca_shm_sa.c has (joins and
 * path records).
 */

#ifndef IPOIB_HCA_SHM_H
#define IPOIB_HCA_SHM_H

#include <stdbool.h>
#include <stdint.h>

#include "ipoib_hca.h"
#include "shm_fabric.h"

struct ipoib_hca {
	struct shm_fabric *f;
	struct shm_port *port;
	bool cm_listen;			/* on the IPoIB service IDs */
	bool sa_path;			/* unicast handles need a path */
	/* answers of the SA polled and not asked for yet, by kind */
	struct shm_sa_event sa_paths[SHM_SA_MAX_PENDING];
	unsigned int nr_sa_paths;
	struct shm_sa_event sa_join;
	bool has_sa_join;
	char name[64];
};

#define TO_SHM(type, p)		((struct shm_ ## type *)(void *)(p))
#define FROM_SHM(type, p)	((struct ipoib_hca_ ## type *)(void *)(p))

uint16_t ipoib_shm_post_send(struct ipoib_hca_qp *hqp,
			     const struct ipoib_send_wr *wr, uint16_t n);
int ipoib_shm_mc_join(struct ipoib_hca *hca, const uint8_t *mgid,
		      uint16_t pkey);
int ipoib_shm_mc_join_poll(struct ipoib_hca *hca, struct ipoib_mc_rec *rec);
int ipoib_shm_path_query(struct ipoib_hca *hca, const uint8_t *dgid,
			 uint16_t pkey, uint64_t cookie);
int ipoib_shm_path_poll(struct ipoib_hca *hca, struct ipoib_path_rec *rec,
			int n);

#endif /* IPOIB_HCA_SHM_H */
