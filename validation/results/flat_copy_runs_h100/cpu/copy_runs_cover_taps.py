"""Every tap of every config the two flat-grid families offer reads inside the XCOPY
positions copied, on a grid of geometries (CPU; the kernels' arithmetic, not a run).

    python3 .../cpu/copy_runs_cover_taps.py > .../cpu/copy_runs_cover_taps.md

A tap (r, s) reads P positions from its flat shift (r * DLH // STH) * WP + s * DLW // STW
of its phase image (the forward's [P, BLOCK] view; wgrad's P / 16 views of 16); checked:
shift + P <= XCOPY, XNEED <= XCOPY <= XP, and the runs add up to XCOPY.
"""

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[4] / "tests"))
from convdispatch.kernels.device import KNOWN  # noqa: E402
from convdispatch.kernels.flat_grid import copy_runs, flat_consts  # noqa: E402
from convdispatch.kernels.grouped_flat import GroupedFlatFamily  # noqa: E402
from convdispatch.kernels.wgrad_grouped_flat import WgradGroupedFlatFamily  # noqa: E402
from helpers import gluon_geom  # noqa: E402

dev, pairs, geoms, bad = KNOWN["h100"], 0, 0, []
for (r, s), (sth, stw), (dlh, dlw), h, w, (c, g), (ph, pw) in itertools.product(
        [(3, 3), (1, 3), (3, 1), (2, 2), (3, 2), (5, 5), (1, 1)],
        [(1, 1), (2, 2), (1, 2), (3, 2), (2, 3)], [(1, 1), (2, 2), (1, 3), (2, 1)],
        [5, 7, 14, 15, 28, 56], [7, 9, 14, 28, 56, 63],
        [(64, 16), (128, 32), (64, 8), (256, 8)], [(0, 0), (1, 1), (2, 1)]):
    try:
        geom = gluon_geom(n=2, c=c, k=c, g=g, h=h, w=w, r=r, s=s, stride=(1, sth, stw),
                          pad=(0, ph, pw), dilation=(1, dlh, dlw))
    except ValueError:
        continue
    geoms += 1
    for fam in (GroupedFlatFamily(), WgradGroupedFlatFamily()):
        if fam.supports(geom) is not None:
            continue
        for cfg in fam.configs:
            if fam.runnable(geom, cfg, dev) is not None:
                continue
            k = flat_consts(geom, cfg["BLOCK_M"])
            pairs += 1
            reach = max((tr * dlh // sth) * k["WP"] + ts * dlw // stw + k["P"]
                        for tr in range(r) for ts in range(s))
            if not (reach <= k["XCOPY"] and k["XNEED"] <= k["XCOPY"] <= k["XP"]
                    and sum(n for _, n in copy_runs(k["XCOPY"])) == k["XCOPY"]):
                bad.append((geom.describe(), cfg, k, reach))
print(f"{geoms} geometries, {pairs} (geometry, family, config) pairs offered; "
      f"{len(bad)} read past XCOPY or break XNEED <= XCOPY <= XP.")
for b in bad[:20]:
    print(b)
