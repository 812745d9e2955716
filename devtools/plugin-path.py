#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print a path from which EAL will load the plugin built in BUILD_DIR.

EAL refuses to dlopen() a plugin below a world-writable directory (/tmp);
when the build tree is below one, the plugin is copied to a private
directory under ~/.cache and that copy's path is printed.

usage: plugin-path.py BUILD_DIR
"""

import os
import shutil
import stat
import sys
import zlib

PLUGIN = "drivers/net/ipoib_cm/librte_net_ipoibcm.so"


def world_writable_ancestor(path):
    path = os.path.realpath(path)
    while True:
        if os.stat(path).st_mode & stat.S_IWOTH:
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def plugin_path(build):
    built = os.path.realpath(os.path.join(build, PLUGIN))
    if not world_writable_ancestor(os.path.dirname(built)):
        return built
    cache = os.path.expanduser("~/.cache/net-ipoibcm")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    if world_writable_ancestor(cache):
        sys.exit("plugin-path: no directory EAL accepts for the plugin")
    key = "%08x" % zlib.crc32(built.encode())
    dst = os.path.join(cache, key)
    os.makedirs(dst, mode=0o700, exist_ok=True)
    dst = os.path.join(dst, os.path.basename(built))
    src = os.stat(built)
    try:
        old = os.stat(dst)
        if (old.st_size, old.st_mtime_ns) == (src.st_size, src.st_mtime_ns):
            return dst
    except FileNotFoundError:
        pass
    # a new file renamed over the old one: processes that loaded the old
    # copy keep it (writing into it would crash them)
    tmp = "%s.%d" % (dst, os.getpid())
    shutil.copy2(built, tmp)
    os.replace(tmp, dst)
    return dst


if __name__ == "__main__":
    print(plugin_path(sys.argv[1]))
