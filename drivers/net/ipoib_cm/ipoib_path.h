/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 *
 * Path records of peers (ipoib_path.c): where the transport needs a
 * peer's LID and SL before an address handle to it can be made (the port
 * attributes' path_records: InfiniBand), the control thread asks the
 * subnet administrator and goes on; the answer comes in a later round.
 */

#ifndef IPOIB_PATH_H
#define IPOIB_PATH_H

#include <stdbool.h>
#include <stdint.h>

#include "ipoib_hca.h"

/* path queries outstanding, per port */
#define IPOIB_PATH_PENDING_MAX	64

struct ipoib_priv;
struct ipoib_peer;

/* A query outstanding, or answered and not taken yet. */
struct ipoib_path_wait {
	uint32_t peer;			/* index + 1; 0: a free entry */
	int status;			/* answered: 0 or a negative errno */
	uint64_t since_ns;		/* asked, then answered */
	uint8_t dgid[IPOIB_GID_LEN];	/* the peer it was asked for */
	uint16_t dlid;
	uint8_t sl;
	uint8_t answered;
};

struct ipoib_paths {
	struct ipoib_path_wait q[IPOIB_PATH_PENDING_MAX];
	/* an answer or a timeout since frames waiting on paths were tried */
	bool changed;
};

/*
 * The route to peer for ah_create() (aa->dgid set): 1 with aa->dlid and
 * aa->sl when the transport needs them (0 when it does not), 0 while the
 * SA is asked (the answer comes later), a negative errno when there is no
 * path. Control thread.
 */
int ipoib_path_get(struct ipoib_priv *priv, const struct ipoib_peer *peer,
		   struct ipoib_ah_attr *aa);
/* Whether frames to peer should wait: its path is asked or will be. */
bool ipoib_path_waiting(const struct ipoib_priv *priv,
			const struct ipoib_peer *peer);
/*
 * Take the SA's answers and time out the queries it lost; peers answered
 * go to the resolve ring (ipoib_peers_resolve() makes their handles).
 * True if anything changed.
 */
bool ipoib_path_poll(struct ipoib_priv *priv);
/* Port stop: every query fails, what waits on one is dropped. */
void ipoib_path_fail_all(struct ipoib_priv *priv);

#endif /* IPOIB_PATH_H */
