/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIBCM_TEST_RAW_H
#define IPOIBCM_TEST_RAW_H

/*
 * A shm port of the test process below the driver: it injects IPoIB
 * frames the driver's own sends could never produce (another P_Key or
 * Q_Key, no GRH, forged addresses).
 */

#include <stdbool.h>
#include <stdint.h>

#include "shm_fabric.h"

/* A raw port, member of partitions 0x8001 and 0x8002. */
struct raw {
	struct shm_fabric *f;
	struct shm_port *port;
	struct shm_cq *cq;
	struct shm_qp *ud[2];	/* pkey_index 0 (0x8001), 1 (0x8002) */
	struct shm_qp *rc;
};

int raw_open(struct raw *r, const char *fab);
void raw_close(struct raw *r);
/* Destroy a QP of R whose receive queue is on R's CQ: its flushes polled. */
void raw_qp_destroy(struct raw *r, struct shm_qp *qp);
/*
 * Send one IPoIB frame (the 4-byte header for proto, then len bytes of
 * payload) from UD QP qp to the 20-byte hardware address hw, with a GRH
 * or without one (global).
 */
int raw_post(struct raw *r, unsigned int qp, uint32_t qkey,
	     const uint8_t *hw, bool global, uint16_t proto,
	     const void *payload, uint32_t len);
/*
 * A REQ from RC QP qp of R to the OFED service ID of the 20-byte hardware
 * address hw, with private data priv (priv_len bytes, none if 0); *ev is
 * the answer (REJ or REP), the CM id gone once it came.
 */
int raw_req(struct raw *r, struct shm_qp *qp, const uint8_t *hw,
	    const void *priv, uint8_t priv_len, struct shm_cm_event *ev);

/*
 * raw_req() from a new RC QP of R (partition 0x8001); *reason: the REJ's
 * reason, or 0 for a REP.
 */
int raw_req_reason(struct raw *r, const uint8_t *hw, const void *priv,
		   uint8_t priv_len, uint16_t *reason);

#endif /* IPOIBCM_TEST_RAW_H */
