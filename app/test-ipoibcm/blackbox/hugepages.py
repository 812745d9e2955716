# SPDX-License-Identifier: BSD-3-Clause
"""2 MiB hugepages for a test's primary process and its secondaries.

Secondary processes share the primary's memory, which --no-huge cannot
give. The test reserves pages on top of what the machine already has
(under a lock: other tests may do the same at once), mounts hugetlbfs on
a mount point of its own and gives both back on every exit path (needs
root, as the tests run; a fresh machine has no hugepages at all).
"""

import atexit
import fcntl
import os
import subprocess

NR = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
FREE = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
LOCK = "/run/lock/ipoibcm-hugepages.lock"
BASE_VA = 0x700000000000


def _read(path):
    with open(path) as f:
        return int(f.read())


class Hugepages:
    """n pages reserved and mounted at self.mnt until release()."""

    def __init__(self, n):
        self.n = 0
        self.mnt = None
        with open(LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            before = _read(NR)
            with open(NR, "w") as f:
                f.write(str(before + n))
            self.n = _read(NR) - before
        atexit.register(self.release)
        if self.n < n:
            raise RuntimeError("asked for %d hugepages of 2 MiB, the kernel "
                               "gave %d" % (n, self.n))
        self.mnt = "/run/ipoibcm-hugepages-%d" % os.getpid()
        os.makedirs(self.mnt, mode=0o700)
        subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                        "nodev", self.mnt], check=True)
        print("  %d hugepages of 2 MiB reserved, mounted at %s (%d free)" %
              (self.n, self.mnt, _read(FREE)), flush=True)

    def eal(self):
        """EAL options of a primary using them.

        The secondaries map the primary's memory at the primary's
        addresses. Left to itself, EAL hints 4 GiB, which ASan's shadow
        occupies, and takes whatever mmap gives: somewhere among the
        shared libraries, where a secondary's own libraries (loaded at
        other random addresses) are found in the way one run in a few
        ("Cannot reserve ... please use '--base-virtaddr'", or a crash).
        BASE_VA is clear of the libraries (top of the address space
        down by mmap's at most 1 TiB of randomisation), of PIE
        programs and their heap (0x55..-0x56..), and of ASan's
        allocator (0x6000_0000_0000 + 4 TiB).
        """
        return ["--huge-dir", self.mnt, "-m", "512", "--no-pci",
                "--base-virtaddr=%#x" % BASE_VA]

    def release(self):
        """Unmount (every process using them has ended) and give back."""
        if self.mnt is not None:
            subprocess.run(["umount", self.mnt])
            os.rmdir(self.mnt)
            self.mnt = None
        if self.n:
            with open(LOCK, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                with open(NR, "w") as f:
                    f.write(str(max(_read(NR) - self.n, 0)))
            print("  %d hugepages given back" % self.n, flush=True)
            self.n = 0
