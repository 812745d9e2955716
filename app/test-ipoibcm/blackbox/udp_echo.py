#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""UDP echo for the kernel tests, run inside a test's namespace.

server ADDR PORT: echo every datagram back, until killed.
client ADDR PORT N SIZE TIMEOUT [SPORT]: send N datagrams one at a time,
  each waiting for its echo (a datagram lost is not resent), from source
  port SPORT if given; print how many came back intact, exit 0 if all
  did.
"""

import os
import socket
import sys


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def server(addr, port):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.bind((addr, port))
    print("listening", flush=True)
    while True:
        data, peer = s.recvfrom(65535)
        s.sendto(data, peer)


def client(addr, port, n, size, timeout, sport=0):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    if sport:
        s.bind(("::" if ":" in addr else "0.0.0.0", sport))
    s.settimeout(timeout)
    ok = 0
    for i in range(n):
        data = i.to_bytes(4, "big") + os.urandom(size - 4)
        s.sendto(data, (addr, port))
        try:
            back, _ = s.recvfrom(65535)
        except socket.timeout:
            continue
        ok += back == data
    print("echoed %d of %d" % (ok, n), flush=True)
    return 0 if ok == n else 1


if sys.argv[1] == "server":
    server(sys.argv[2], int(sys.argv[3]))
else:
    sys.exit(client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                    int(sys.argv[5]), float(sys.argv[6]),
                    int(sys.argv[7]) if len(sys.argv) > 7 else 0))
