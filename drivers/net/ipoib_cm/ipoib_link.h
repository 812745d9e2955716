/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_LINK_H
#define IPOIB_LINK_H

#include <stdbool.h>

#include <ethdev_driver.h>

#include "ipoib_cm.h"

/* eth_dev_ops.link_update: up while started and the HCA port is ACTIVE. */
int ipoib_link_update(struct rte_eth_dev *dev, int wait);
/* Set the link status from the port's state; tell the application. */
void ipoib_link_report(struct ipoib_priv *priv, bool notify);
/* Control thread: the HCA port went down (active false) or came back. */
void ipoib_link_event(struct ipoib_priv *priv, bool active);
/* Control thread: the transport failed; RTE_ETH_EVENT_INTR_RESET. */
void ipoib_link_fatal(struct ipoib_priv *priv);

#endif /* IPOIB_LINK_H */
