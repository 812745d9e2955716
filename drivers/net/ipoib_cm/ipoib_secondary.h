/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_SECONDARY_H
#define IPOIB_SECONDARY_H

struct ipoib_priv;
struct rte_vdev_device;

/* Secondary process: attach to the primary's port. */
int ipoib_secondary_probe(struct rte_vdev_device *vdev);

/* Primary: answer the secondaries (once per process, at probe). */
void ipoib_secondary_serve(void);
/* Primary, dev_close: no secondary request is served from now on. */
void ipoib_secondary_closing(struct ipoib_priv *priv);
/*
 * Primary: the answer a secondary attaching to port name gets: 0, or
 * -ENODEV (no such port, or it closes; counted in secondary_refused).
 */
int ipoib_secondary_admit(const char *name);

#endif /* IPOIB_SECONDARY_H */
