# SPDX-License-Identifier: BSD-3-Clause
"""Rounds to figures: median and best of a configuration's rounds, and
ratios computed from the same rounds (median/median, best/best).

A round that failed holds None: it is left out, and the count of rounds
that gave a figure is reported beside it.
"""

import statistics


def ok(values):
    return [v for v in values if v is not None]


def median(values):
    v = ok(values)
    return statistics.median(v) if v else None


def best(values, higher=True):
    v = ok(values)
    if not v:
        return None
    return max(v) if higher else min(v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(v, spec="%.2f", none="n/a"):
    return none if v is None else spec % v


def fmt_ratio(v):
    return fmt(v, "%.2fx")


def verdict(value, limit, higher=True):
    """met / not met / unavailable, for value against its target."""
    if value is None:
        return "unavailable"
    good = value >= limit if higher else value <= limit
    return "met" if good else "not met"
