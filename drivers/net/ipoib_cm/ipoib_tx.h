/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TX_H
#define IPOIB_TX_H

#include "ipoib_cm.h"

#define IPOIB_TX_BURST		32	/* frames taken per call */

#endif /* IPOIB_TX_H */
