/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_REAPER_H
#define IPOIB_REAPER_H

/*
 * Receive pools the application still holds mbufs of (ipoib_reaper.c),
 * process-wide: a pool lives until its last mbuf is back, whatever became
 * of its connection, queue or port; the transport (HCA) its memory belongs
 * to stays open until then.
 */

#include <stdint.h>

struct ipoib_hca;
struct ipoib_hca_ops;
struct ipoib_pool;

/* Take a pool with mbufs out: freed (with its HCA memory) once full. */
void ipoib_reaper_adopt(const struct ipoib_hca_ops *ops, struct ipoib_hca *hca,
			struct ipoib_pool *pool);
/* Free a pool now: its mempool, EAL's registration, its HCA memory. */
void ipoib_reaper_release(const struct ipoib_hca_ops *ops,
			  struct ipoib_hca *hca, struct ipoib_pool *pool);
/* Close hca now, or once the last pool of its memory has been freed. */
void ipoib_reaper_close_hca(const struct ipoib_hca_ops *ops,
			    struct ipoib_hca *hca);
/* Free the pools that came back; returns how many pools still wait. */
unsigned int ipoib_reaper_reap(void);
/* Pools still waiting (all, or of hca), and their bytes. */
unsigned int ipoib_reaper_waiting(const struct ipoib_hca *hca,
				  uint64_t *bytes);
/* The last port of the process is removed (EAL cleanup): free all. */
void ipoib_reaper_fini(void);

#endif /* IPOIB_REAPER_H */
