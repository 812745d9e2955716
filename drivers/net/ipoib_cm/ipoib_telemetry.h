/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The net_ipoibcm authors
 */

#ifndef IPOIB_TELEMETRY_H
#define IPOIB_TELEMETRY_H

#include <stdint.h>

struct ipoib_priv;

/* The driver state of an ethdev port, NULL if it is not one of ours. */
struct ipoib_priv *ipoib_priv_of_port(uint16_t port);

#endif /* IPOIB_TELEMETRY_H */
