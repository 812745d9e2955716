# SPDX-License-Identifier: BSD-3-Clause
"""The report: reStructuredText tables of one run, and the targets of
issue 15 beside the measured figures.

The input is what devtools/bench.py gathered, every figure per round:
  rates[cfg][size]     [{"mpps", "gbps", "bytes"} or None per round]
  memcpy               [{pattern: Gbit/s} or None per round]
  setups               [{(srq, peers, layout): setups/s} or None per round]
  mq[cfg][queues]      [{"mpps", "rxq", "txq"} or None per round]
  latency[cfg][size]   [{"median_us", "p99_us", ...} or None per round]
  autotest[cfg]        [{"cycles"} or {"unavailable"} per round]
  icount[cfg]          {size: {"rx", "tx"}} or {"unavailable": reason}
  icount_lpbk[cfg]     the same, net_ipoibcm's port in loopback mode
  icount_b1[cfg]       the same, 64 B, bursts of one frame
  icount_notes         [str]: counts kept although the run then died
  profile[cfg]         {"sender": [rows], "receiver": [rows]}
"""

from benchlib import configs, setups
from benchlib.memcpy import BASELINE
from benchlib.stats import (best, fmt, fmt_ratio, median, ratio, verdict)


def table(header, rows):
    """An RST simple table."""
    cols = list(zip(*([header] + rows)))
    w = [max(len(str(c)) for c in col) for col in cols]
    rule = "  ".join("=" * n for n in w)

    def line(r):
        return "  ".join(str(c).ljust(n) for c, n in zip(r, w)).rstrip()
    return [rule, line(header), rule] + [line(r) for r in rows] + [rule, ""]


def field(rounds, key):
    return [r[key] if r is not None and key in r else None for r in rounds]


def size_name(size):
    return "64 KiB (%d)" % size if size == configs.LARGE[-1] else str(size)


def rate_stats(res, cfg, size, key="mpps"):
    rounds = res["rates"].get(cfg, {}).get(size, [])
    vals = field(rounds, key)
    return median(vals), best(vals), len([v for v in vals if v is not None])


def rate_rows(res):
    rows = []
    for cfg in configs.CONFIGS:
        for size in sorted(res["rates"].get(cfg, {})):
            med, bst, n = rate_stats(res, cfg, size)
            gmed = rate_stats(res, cfg, size, "gbps")[0]
            mm, mb, _ = rate_stats(res, configs.MEMIF, size)
            rm = rb = ""
            if cfg != configs.MEMIF and size in configs.SMALL:
                rm, rb = fmt_ratio(ratio(med, mm)), fmt_ratio(ratio(bst, mb))
            rows.append([cfg, size_name(size), fmt(med, "%.3f"),
                         fmt(bst, "%.3f"), fmt(gmed), rm, rb, n])
    return table(["Path", "Size (B)", "Mpps median", "Mpps best",
                  "Gbit/s median", "vs memif median", "vs memif best",
                  "rounds"], rows)


def memcpy_stats(res):
    vals = [r[BASELINE] if r else None for r in res["memcpy"]]
    return median(vals), best(vals)


def memcpy_rows(res):
    pats = []
    for r in res["memcpy"]:
        for k in (r or {}):
            if k not in pats:
                pats.append(k)
    rows = [[p, fmt(median([r.get(p) if r else None
                            for r in res["memcpy"]])),
             fmt(best([r.get(p) if r else None for r in res["memcpy"]]))]
            for p in pats]
    return table(["memcpy of 64000 B blocks, one core", "Gbit/s median",
                  "Gbit/s best"], rows)


def setups_stats(res, key):
    vals = [r.get(key) if r else None for r in res["setups"]]
    return median(vals), best(vals), len([v for v in vals if v])


def setups_rows(res):
    rows = []
    for key in setups.KEYS:
        med, bst, n = setups_stats(res, key)
        rows.append([setups.name(key), fmt(med, "%.0f"), fmt(bst, "%.0f"),
                     str(n)])
    return table(["Connection setups (perf_connect)", "per second median",
                  "per second best", "rounds"], rows)


def large_ratio(res, cfg):
    """64 KiB Gbit/s against memcpy: (median/median, best/best)."""
    size = configs.LARGE[-1]
    gm, gb, _ = rate_stats(res, cfg, size, "gbps")
    cm, cb = memcpy_stats(res)
    return ratio(gm, cm), ratio(gb, cb)


def icount_total(res, cfg, size, key="icount"):
    ic = res.get(key, {}).get(cfg, {})
    if size not in ic:
        return None
    return ic[size]["rx"]["ir"] + ic[size]["tx"]["ir"]


def icount_rows(res, key="icount"):
    rows = []
    for cfg in configs.CONFIGS:
        ic = res.get(key, {}).get(cfg, {})
        if "unavailable" in ic:
            rows.append([cfg, "all", "n/a", "n/a", "n/a", ic["unavailable"]])
            continue
        for size in sorted(ic):
            tot = icount_total(res, cfg, size, key)
            mem = icount_total(res, configs.MEMIF, size, key)
            rows.append([cfg, size, "%.0f" % ic[size]["rx"]["ir"],
                         "%.0f" % ic[size]["tx"]["ir"], "%.0f" % tot,
                         "" if cfg == configs.MEMIF else
                         fmt_ratio(ratio(tot, mem))])
    return table(["Path", "Size (B)", "rx Ir/pkt", "tx Ir/pkt",
                  "rx+tx Ir/pkt", "vs memif"], rows)


def icount_lpbk_rows(res):
    rows = []
    for cfg in configs.IPOIB:
        ic = res.get("icount_lpbk", {}).get(cfg, {})
        if "unavailable" in ic:
            rows.append([cfg, "all", "n/a", "n/a", "n/a"])
            continue
        for size in sorted(ic):
            rows.append([cfg, size, "%.0f" % ic[size]["rx"]["ir"],
                         "%.0f" % ic[size]["tx"]["ir"],
                         "%.0f" % (ic[size]["rx"]["ir"] +
                                   ic[size]["tx"]["ir"])])
    return table(["Path", "Size (B)", "rx Ir/pkt", "tx Ir/pkt",
                  "rx+tx Ir/pkt"], rows)


def icount_top(res, size, key="icount", label=""):
    lines = []
    for cfg in configs.CONFIGS:
        ic = res.get(key, {}).get(cfg, {})
        if size not in ic:
            continue
        for side in ("rx", "tx"):
            lines += ["%s, %s side, %d B%s: %.0f instructions per packet, "
                      "by function (exclusive)::" %
                      (cfg, side, size, label, ic[size][side]["ir"]), ""]
            lines += ["    %8.1f  %s" % (v, f)
                      for f, v in ic[size][side]["top"]]
            lines.append("")
    return lines


def lat_stats(res, cfg, size, key):
    vals = field(res["latency"].get(cfg, {}).get(size, []), key)
    return median(vals), best(vals, higher=False)


def latency_rows(res):
    rows = []
    for cfg in configs.CONFIGS:
        for size in sorted(res["latency"].get(cfg, {})):
            rounds = res["latency"][cfg][size]
            med = {k: lat_stats(res, cfg, size, k)
                   for k in ("median_us", "p99_us", "p999_us")}
            vs = ["", ""]
            if cfg != configs.MEMIF:
                vs = [fmt_ratio(ratio(med[k][0], lat_stats(
                    res, configs.MEMIF, size, k)[0]))
                    for k in ("median_us", "p99_us")]
            ud = sum(r["ud_rx"] for r in rounds if r)
            rows.append([cfg, size, fmt(med["median_us"][0]),
                         fmt(med["p99_us"][0]), fmt(med["p999_us"][0]),
                         fmt(med["median_us"][1]), fmt(med["p99_us"][1])]
                        + vs + [len([r for r in rounds if r]), ud])
    return table(["Path", "Size (B)", "median us", "p99 us", "p99.9 us",
                  "best median", "best p99", "median vs memif",
                  "p99 vs memif", "rounds", "UD echoes"], rows)


def mq_rows(res):
    rows = []
    for cfg in configs.CONFIGS:
        mq = res["mq"].get(cfg)
        if not mq:
            continue
        one = field(mq.get(1, []), "mpps")
        two = field(mq.get(2, []), "mpps")
        per_q = {}
        for r in mq.get(2, []):
            for q, n in ((r or {}).get("rxq") or {}).items():
                per_q[q] = per_q.get(q, 0) + n
        total = sum(per_q.values())
        share = " / ".join("q%d %.0f%%" % (q, 100.0 * n / total)
                           for q, n in sorted(per_q.items())) \
            if total else "n/a"
        rows.append([cfg, fmt(median(one), "%.3f"), fmt(median(two), "%.3f"),
                     fmt(best(one), "%.3f"), fmt(best(two), "%.3f"),
                     fmt_ratio(ratio(median(two), median(one))), share])
    return table(["Path", "1 queue Mpps median", "2 queues Mpps median",
                  "1 queue best", "2 queues best", "2 / 1 (median)",
                  "rx share by queue (2 queues)"], rows)


def autotest_stats(res, cfg):
    rounds = res["autotest"].get(cfg, [])
    cyc = [r.get("cycles") for r in rounds if r]
    why = [r["unavailable"] for r in rounds if r and "unavailable" in r]
    return median(cyc), (why[0] if why and median(cyc) is None else None)


def autotest_rows(res):
    rows = []
    for cfg in configs.CONFIGS:
        if cfg not in res["autotest"]:
            continue
        med, why = autotest_stats(res, cfg)
        rows.append([cfg, fmt(med, "%.0f") if why is None else
                     "unavailable: " + why])
    return table(["Ports", "cycles/packet (median of rounds)"], rows)


def rate_targets(res, add):
    for cfg in configs.IPOIB:
        for size, limit in ((64, 1.0), (1500, 1.0), (1500, 1.5)):
            med, bst, _ = rate_stats(res, cfg, size)
            mm, mb, _ = rate_stats(res, configs.MEMIF, size)
            add("%s, %d B packet rate vs memif, median/median" % (cfg, size),
                ratio(med, mm), limit)
            add("%s, %d B packet rate vs memif, best/best" % (cfg, size),
                ratio(bst, mb), limit)
    for cfg in configs.IPOIB:
        m, b = large_ratio(res, cfg)
        add("%s, 64 KiB Gbit/s vs single-core memcpy, median/median" % cfg,
            m, 0.95)
        add("%s, 64 KiB Gbit/s vs single-core memcpy, best/best" % cfg,
            b, 0.95)


def targets(res):
    """The targets of issue 15, each with its figure and verdict."""
    out = []

    def add(what, value, limit, higher=True, spec="%.2fx"):
        out.append("- %s: %s (target %s %s): **%s**" % (
            what, fmt(value, spec), ">=" if higher else "<=",
            spec % limit, verdict(value, limit, higher)))

    if res["rates"]:
        rate_targets(res, add)
    if res["setups"]:
        for key in setups.TARGETS:
            med, bst, _ = setups_stats(res, key)
            for what, v in (("median", med), ("best", bst)):
                add("%s, setups per second, %s of rounds" %
                    (setups.name(key), what), v, 10000, spec="%.0f")
    if res["icount"]:
        for cfg in configs.IPOIB:
            for size in configs.SMALL:
                add("%s, %d B instructions per packet (rx+tx) vs memif" %
                    (cfg, size),
                    ratio(icount_total(res, cfg, size),
                          icount_total(res, configs.MEMIF, size)),
                    1.0, higher=False)
    if res["latency"]:
        for cfg in configs.IPOIB:
            for size in configs.SMALL:
                for k, name in (("median_us", "median"), ("p99_us", "p99")):
                    add("%s, %d B round trip %s vs memif" % (cfg, size, name),
                        ratio(lat_stats(res, cfg, size, k)[0],
                              lat_stats(res, configs.MEMIF, size, k)[0]),
                        1.0, higher=False)
    if res["autotest"]:
        mem = autotest_stats(res, configs.MEMIF)[0]
        for cfg in configs.IPOIB:
            cyc, why = autotest_stats(res, cfg)
            add("%s, pmd_perf_autotest cycles/packet vs memif%s" %
                (cfg, "" if why is None else " (%s)" % why),
                ratio(cyc, mem), 1.0, higher=False)
    return out


def render(res, meta):
    """The whole report, reStructuredText."""
    lines = [":Date: %s" % meta["date"], ":Machine: %s" % meta["machine"],
             ":Load: %s" % meta["load"], ":Code: %s" % meta["commit"],
             ":Command: ``%s``" % meta["command"],
             ":Rounds: %s" % meta["rounds"], ""]
    if meta.get("smoke"):
        lines += ["**--smoke: a test that the instruments run, with tiny "
                  "parameters; its figures mean nothing.**", ""]
    if meta.get("plot"):
        lines += ["Plot: ``%s``" % meta["plot"], ""]
    if res["rates"]:
        lines += ["Packet rates (testpmd txonly -> rxonly, two processes; "
                  "ratios from the same rounds):", ""] + rate_rows(res)
    if res["memcpy"]:
        lines += memcpy_rows(res)
    if res["setups"]:
        lines += ["Connection setups (dpdk-test-ipoibcm perf_connect, one "
                  "process; each round's figure is the median of five "
                  "1-second windows; the layouts: ``devtools/benchlib/"
                  "setups.py``):", ""] + setups_rows(res)
    if res["icount"]:
        lines += ["Instructions per packet inside the bursts (callgrind, "
                  "%s; one process, bursts of 32):" % meta["valgrind"], ""]
        lines += icount_rows(res)
        if res.get("icount_notes"):
            lines += ["Notes on the counts::", ""] + \
                ["    " + n for n in res["icount_notes"]] + [""]
        for size in configs.SMALL:
            lines += icount_top(res, size)
    if res.get("icount_lpbk"):
        lines += ["Instructions per packet, one net_ipoibcm port in loopback "
                  "mode (datagrams to its own UD QP: the path "
                  "pmd_perf_autotest measures; net_memif has no loopback "
                  "mode):", ""] + icount_lpbk_rows(res)
        lines += icount_top(res, configs.SMALL[0], "icount_lpbk",
                            " in loopback")
    if res.get("icount_b1"):
        lines += ["Instructions per packet in bursts of one frame (a "
                  "ping-pong's bursts, where no other packet shares what "
                  "a burst costs beside its packets; the same harness "
                  "with ``--burst 1``):", ""] + icount_rows(res, "icount_b1")
        lines += icount_top(res, configs.SMALL[0], "icount_b1",
                            " in bursts of one")
    if res["latency"]:
        lines += ["Round trips (dpdk-ipoibcm-bench ping/echo, two "
                  "processes; median of the rounds' percentiles, best "
                  "= lowest round):", ""] + latency_rows(res)
    if res["mq"]:
        lines += ["Queue pairs (txonly -> rxonly at 64 B, one forwarding "
                  "lcore per host polling every queue):", ""] + mq_rows(res)
    if res["autotest"]:
        lines += ["dpdk-test pmd_perf_autotest (two ports of one driver in "
                  "one process):", ""] + autotest_rows(res)
    if res.get("profile_unavailable"):
        lines += ["perf profiles unavailable: %s" %
                  res["profile_unavailable"], ""]
    for cfg, sides in res["profile"].items():
        for side, rows in sides.items():
            lines += ["perf record, %s, 64 B, %s (top symbols, share of "
                      "samples)::" % (cfg, side), ""]
            lines += ["    " + r for r in rows] + [""]
    lines += ["Targets (issue 15):", ""] + targets(res) + [""]
    if res["errors"]:
        lines += ["Failures (figures left out)::", ""] + \
            ["    " + e.replace("\n", "\n    ") for e in res["errors"]] + [""]
    return "\n".join(lines)
