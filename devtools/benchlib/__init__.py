# SPDX-License-Identifier: BSD-3-Clause
"""The parts of devtools/bench.py: one measurement per module."""
