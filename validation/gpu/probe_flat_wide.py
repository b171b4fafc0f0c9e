"""32-channel tiles of wgrad_grouped_flat for groups of 4-16 channels, before a sweep.

    python3 validation/gpu/probe_flat_wide.py OUT.csv PROBLEM_IDS

``flat_grid.flat_config_rejects`` keeps BLOCK_N=32 from groups that fit 16 (the tile's
zero blocks double). Since call 168 the 32-channel rows are held in planes (no bank
conflicts) and take 4 warps, where 16-channel rows keep 2-way conflicts and 2 warps.
Times, with the sweep's timer, the shipped wgrad model's pick and the BLOCK_N=32 configs of
4 warps and splits 8-32 that the family's hard rules allow (launched directly: the soft
rule would refuse them), each checked against torch in float32. Writes one row per
(problem, candidate).
"""

from __future__ import annotations

import sys

from convdispatch.dispatcher import registry
from convdispatch.kernels.base import Candidate, Config
from convdispatch.kernels.flat_grid import FLAT_POSITIONS
from convdispatch.validation.probe_io import probe_gradients

FAMILY = "wgrad_grouped_flat"


def wide_configs(geom, dev) -> list[Candidate]:
    fam = registry.family(FAMILY)
    out = []
    for pos in FLAT_POSITIONS:
        for split in (8, 16, 32):
            cfg = Config(BLOCK_M=pos, BLOCK_N=32, SPLIT_K=split, num_warps=4, num_stages=2)
            if fam.hard_ok(geom, cfg, dev) is None:
                out.append(Candidate(FAMILY, cfg))
    return out


def main(argv: list[str]) -> int:
    def candidates(g, dev, chooser):
        pick = chooser.choose(g, registry.candidates(g, dev, "wgrad"), dev).candidate
        return pick, wide_configs(g, dev)

    return probe_gradients(argv[0], "wgrad", argv[1], candidates, label="wide")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
