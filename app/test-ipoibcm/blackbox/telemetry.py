# SPDX-License-Identifier: BSD-3-Clause
"""Ask a running DPDK process's telemetry, as dpdk-telemetry.py does."""

import json
import socket


def telemetry(prefix, query, show=600):
    """One query to the process of EAL file prefix; the JSON answer."""
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    json.loads(s.recv(16384))	# the greeting
    s.send(query.encode())
    reply = json.loads(s.recv(1 << 20))
    s.close()
    if show:
        print("  telemetry %s: %s" % (query, json.dumps(reply)[:show]),
              flush=True)
    return reply
