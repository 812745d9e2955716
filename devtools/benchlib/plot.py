# SPDX-License-Identifier: BSD-3-Clause
"""The report's plot: Mpps by frame size, one line per configuration
(median of the rounds, the best round as a marker), and the round-trip
percentiles at each size (python3-matplotlib, devtools/setup.sh).
"""

from benchlib import configs
from benchlib.report import lat_stats, rate_stats

PERCENTILES = (("median_us", "median"), ("p99_us", "p99"),
               ("p999_us", "p99.9"))


def write(res, path, title):
    """Write the PNG; None, or why it could not be made."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "python3-matplotlib is not installed (devtools/setup.sh)"
    sizes_lat = sorted({s for c in res["latency"].values() for s in c})
    fig, axes = plt.subplots(1, 1 + len(sizes_lat),
                             figsize=(5 + 4 * len(sizes_lat), 4.5))
    if not sizes_lat:
        axes = [axes]
    ax = axes[0]
    for cfg in configs.CONFIGS:
        sizes = sorted(res["rates"].get(cfg, {}))
        pts = [(s, rate_stats(res, cfg, s)[:2]) for s in sizes]
        pts = [(s, m, b) for s, (m, b) in pts if m is not None]
        if not pts:
            continue
        line = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                       label=cfg + " (median)")[0]
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "^",
                color=line.get_color(), label=cfg + " (best)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("frame size (bytes)")
    ax.set_ylabel("Mpps")
    ax.set_title("txonly -> rxonly")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    for ax, size in zip(axes[1:], sizes_lat):
        xs = range(len(PERCENTILES))
        for cfg in configs.CONFIGS:
            ys = [lat_stats(res, cfg, size, k)[0] for k, _ in PERCENTILES]
            if all(y is not None for y in ys):
                ax.plot(xs, ys, "o-", label=cfg)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([n for _, n in PERCENTILES])
        ax.set_yscale("log")
        ax.set_ylabel("round trip (us)")
        ax.set_title("ping-pong, %d B" % size)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None
