"""A device probe's paired timing of one change: each candidate launched with a switch off
and on (a module name the launch reads), both outputs checked against torch, both timed in
turn (``bench_layers.paired_graph_times``: CUDA-graph replays, L2 flushed)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..dispatcher import launch as launch_mod
from ..kernels.base import Candidate
from .bench_layers import conv_args, make_tensors, paired_graph_times, rel_err


def switch_pairs(p, seed: int, cands: list[tuple[Candidate, dict]],
                 switch: Callable[[bool], None], names: tuple[str, str],
                 rep_ms: int) -> list[dict]:
    """One row a candidate of problem ``p`` that ran both ways: its ``extra`` fields, then
    ``NAME_us`` and ``err_NAME`` for names (off, on), and whether both gave the same bits.
    ``switch(on)`` sets the launch's way; it is left off. A candidate that raises is
    printed and has no row."""
    g = p.geom
    x, w, b = make_tensors(g, "cuda", seed=seed)
    tconv = F.conv2d if g.dims == 2 else F.conv3d
    ref = tconv(x.float(), w.float(), None if b is None else b.float(), **conv_args(g))
    outs = {on: torch.empty_like(ref, dtype=x.dtype) for on in (False, True)}
    off_name, on_name = names
    rows = []
    for cand, extra in cands:

        def side(on, cand=cand):
            def fn():
                switch(on)
                launch_mod.launch(cand, x, w, b, g, outs[on])
            return fn

        try:
            errs = {}
            for on in (False, True):
                outs[on].fill_(float("nan"))
                side(on)()
                torch.cuda.synchronize()
                errs[on] = rel_err(outs[on], ref)
            old, new = paired_graph_times(side(False), side(True), rep_ms)
        except Exception as e:  # noqa: BLE001 - a config that fails is recorded by its absence
            print(f"{p.id} {cand}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        finally:
            switch(False)
        rows.append(dict(problem_id=p.id, config=str(cand.config), **extra,
                         **{f"{off_name}_us": round(old * 1e3, 3),
                            f"{on_name}_us": round(new * 1e3, 3),
                            f"err_{off_name}": errs[False], f"err_{on_name}": errs[True]},
                         same_bits=bool(torch.equal(outs[False], outs[True]))))
        print(f"{p.id} {cand.config}: {off_name} {old * 1e3:.1f} us, {on_name} "
              f"{new * 1e3:.1f} us (x{old / new:.3f}), errors {errs[False]:.1e} "
              f"{errs[True]:.1e}", flush=True)
    return rows
