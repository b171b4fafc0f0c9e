"""``grouped_flat``'s WGMMA kernel with its input copied by the tensor memory accelerator
(TMA): a prototype against the shipped kernel, config by config, on the issue-6 suite's 2D
grouped layers.

    python3 validation/gpu/probe_flat_tma.py CONFIGS.csv OUT.csv [STAGES ...] [--all]
        [--2d | --3d] [--bf16]

CONFIGS.csv: (problem_id, config) rows; the WGMMA configs are taken. With --all, every
WGMMA config the family offers the layers, two buffers, and the listed mma.sync configs
timed as shipped (the layer's fastest of call 288). --2d, --3d: those layers only;
--bf16: the layers in bfloat16 (CONFIGS.csv's problem ids name float16: the same layers).

The prototype keeps the family's loop, taps (``_taps_wgmma``) and epilogue; what changes
is the copy. Each stride-phase image is a strided 4D view of the input ([N, H / STH,
W / STW, C]) loaded as boxes of whole rows of a grid WB = next_pow2(OW + BMAX) columns
wide (TMA boxes are powers of two: an item's ROWS + AMAX input rows are one or two boxes),
zeros where the box leaves the view (the padding, as the copies' masks gave), completing
on one mbarrier a buffer; in 3D a step is an item's depth tap, as shipped, and the box's
depth coordinate picks the slice (outside the input: zeros, the depth padding). One
thread issues a buffer's boxes where every thread issued
16-byte copies; STAGES buffers (2: as shipped; 3: two items' copies in flight while one
is computed). Its output is checked against torch in float32; both kernels are timed
with ``bench_layers.paired_graph_times`` (CUDA-graph replays, L2 flushed, each side the
lowest of three interleaved rounds).
"""

from __future__ import annotations

import csv
import sys

import torch
from convdispatch.dispatcher.launch import run_candidate
from convdispatch.dispatcher.registry import parse_candidate
from convdispatch.kernels import grouped_flat
from convdispatch.kernels.base import next_pow2
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.dead_taps import trim_dead_taps
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.flat_grid import copy_layout, filter_tiles, row_layout, unit_rows
from convdispatch.kernels.grouped_flat import _epilogue, _taps_wgmma, _zero_runs
from convdispatch.validation.bench_layers import (
    bench_graph,
    make_tensors,
    paired_graph_times,
    reference,
    rel_err,
    suite_layers,
)
from convdispatch.validation.probe_io import stream_rows
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

REP_MS = 5


@gluon.jit
def _tma_issue(step, items, da0, db0, da1, db1, da2, db2, da3, db3, x_units, bar, pack,
               TILES_H, OD, pdd, BUF: gl.constexpr, NPH: gl.constexpr, T: gl.constexpr,
               STD: gl.constexpr, DLD: gl.constexpr, ROWS: gl.constexpr, RA: gl.constexpr,
               RB: gl.constexpr, WB: gl.constexpr, XS: gl.constexpr, BLOCK: gl.constexpr,
               OFF: gl.constexpr):
    """Every phase image of the input slice that step ``step`` of the program reads (item
    ``step // T``, clamped to the last, depth tap ``step % T``) into buffer BUF of
    ``x_units`` (phase images of XS rows): boxes of RA and RB rows, completing on ``bar``.
    OFF: each phase's (row, column) offset in its view. Zeros where a box leaves the view
    (padding, depth padding included: its depth coordinate is then outside)."""
    it = gl.minimum(step // T, items - 1)
    img = it // TILES_H
    di = (img % OD) * STD - pdd + (step % T) * DLD
    n = img // OD
    oh0 = (it % TILES_H) * ROWS
    mbarrier.expect(bar, NPH * (RA + RB) * WB * BLOCK * 2)
    descs_a = (da0, da1, da2, da3)
    descs_b = (db0, db1, db2, db3)
    L5: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=2 * BLOCK, element_bitwidth=16,
                                            rank=5)
    for ph in gl.static_range(NPH):
        base = (BUF * NPH + ph) * XS
        tma.async_copy_global_to_shared(
            descs_a[ph], [n, di, oh0 + OFF[ph][0], OFF[ph][1], pack * BLOCK], bar,
            x_units.index(base * (BLOCK // 8))._reinterpret(
                x_units.dtype, [1, 1, RA, WB, BLOCK], L5))
        if RB > 0:
            tma.async_copy_global_to_shared(
                descs_b[ph], [n, di, oh0 + RA + OFF[ph][0], OFF[ph][1], pack * BLOCK], bar,
                x_units.index((base + RA * WB) * (BLOCK // 8))._reinterpret(
                    x_units.dtype, [1, 1, RB, WB, BLOCK], L5))


@gluon.jit
def flat_tma_kernel(
    da0, db0, da1, db1, da2, db2, da3, db3, w_ptr, out_ptr, syn, syc, syd, syh, syw,
    K, OD, OH, OW, pdd, TILES_H, ITEMS, ITEMS_PER_PROGRAM, swk, swc, swt, swr, sws,
    CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, T: gl.constexpr,
    R: gl.constexpr, S: gl.constexpr, ROWS: gl.constexpr, WB: gl.constexpr, P: gl.constexpr,
    XS: gl.constexpr, NPH: gl.constexpr, BLOCK: gl.constexpr, STD: gl.constexpr,
    STH: gl.constexpr, STW: gl.constexpr, DLD: gl.constexpr, DEPTH: gl.constexpr,
    RA: gl.constexpr, RB: gl.constexpr, OFF: gl.constexpr, STAGES: gl.constexpr,
    W_VEC: gl.constexpr,
):
    NW: gl.constexpr = gl.num_warps()
    LX: gl.constexpr = copy_layout(BLOCK, NW)
    MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[NW, 1],
                                                  instr_shape=[16, BLOCK, 16])
    SW: gl.constexpr = row_layout(BLOCK, BLOCK, BLOCK, True)
    pack = gl.program_id(0)
    first = gl.program_id(1) * ITEMS_PER_PROGRAM
    end = gl.minimum(first + ITEMS_PER_PROGRAM, ITEMS)
    XR: gl.constexpr = STAGES * NPH * XS
    x_units = unit_rows(w_ptr.dtype.element_ty, XR, BLOCK, True)
    XT: gl.constexpr = row_layout(P, BLOCK, XR, True)
    w_smem = gl.allocate_shared_memory(w_ptr.dtype.element_ty, [T * R * S, BLOCK, BLOCK], SW)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    # (A step is an item's depth tap: T steps an item, the program's first at first * T.)
    s0 = first * T
    for i in gl.static_range(STAGES - 1):
        _tma_issue(s0 + i, ITEMS, da0, db0, da1, db1, da2, db2, da3, db3, x_units,
                   bars.index(i), pack, TILES_H, OD, pdd, i, NPH, T, STD, DLD, ROWS, RA, RB,
                   WB, XS, BLOCK, OFF)
    for plane in gl.static_range(T):
        filter_tiles(w_smem, plane * R * S, w_ptr, pack, K, swk, swc, swr, sws, KG, CG, GPT,
                     R, S, BLOCK, False, LX, True, W_VEC, plane * swt)
    fence_async_shared()
    gl.thread_barrier()
    acc = _zero_runs(P, BLOCK, 1, MMA)
    steps = ITEMS_PER_PROGRAM * T
    for it in range(0, steps, STAGES):
        for buf in gl.static_range(STAGES):
            # the buffer the previous step read: free since that step's barrier
            _tma_issue(s0 + it + buf + STAGES - 1, ITEMS, da0, db0, da1, db1, da2, db2,
                       da3, db3, x_units, bars.index((buf + STAGES - 1) % STAGES), pack,
                       TILES_H, OD, pdd, (buf + STAGES - 1) % STAGES, NPH, T, STD, DLD, ROWS,
                       RA, RB, WB, XS, BLOCK, OFF)
            mbarrier.wait(bars.index(buf), (it // STAGES) & 1)
            td = (it + buf) % T
            acc = (_taps_wgmma(acc[0], x_units, w_smem, td * (R * S), buf, R, S, P, WB, XS,
                               NPH, STH, STW, 1, 1, BLOCK, XT),)
            gl.thread_barrier()
            if td == T - 1:
                _epilogue(acc[0], first + (it + buf) // T, end, pack, out_ptr, syn, syc, syd,
                          syh, syw, out_ptr, out_ptr, 0, 0, 0, 0, 0, K, OD, OH, OW, TILES_H,
                          KG, GPT, ROWS, WB, P, 16, 0, BLOCK, DEPTH, 0, False, False, MMA, LX)
                acc = _zero_runs(P, BLOCK, 1, MMA)
    # the copies issued past the last step land before the program ends
    for i in gl.static_range(STAGES - 1):
        mbarrier.wait(bars.index(i), (steps // STAGES) & 1)


def tma_plan(geom, positions: int, block: int) -> dict:
    """Grid, rows and boxes of the TMA copies of ``geom`` (2D) for items of ``positions``."""
    _, sth, stw = geom.stride
    _, oh, ow = geom.out_spatial
    if geom.dilation[1:] != (1, 1):
        raise ValueError("the prototype's taps are undilated")
    amax, bmax = (geom.r - 1) // sth, (geom.s - 1) // stw
    wb = next_pow2(ow + bmax)
    if wb > positions:
        raise ValueError(f"a {wb}-wide grid row does not fit {positions} positions")
    rows = min(positions // wb, oh)
    need = rows + amax
    ra = 1 << (need.bit_length() - 1)
    rb = need - ra
    if rb & (rb - 1):
        raise ValueError(f"{need} input rows an item are not two boxes of powers of two")
    xs = -(-(need * wb + bmax) // 32) * 32
    return dict(WB=wb, ROWS=rows, RA=ra, RB=rb, XS=xs, NPH=sth * stw)


def descriptors(x: torch.Tensor, geom, plan: dict, block: int) -> tuple[list, tuple]:
    """The 8 descriptors (parts a and b of 4 phases; unused ones repeat) of 5D views
    [N, D, H / STH, W / STW, C] of the phases, and each phase's (row, column) offset in its
    view."""
    _, sth, stw = geom.stride
    _, ph_, pw_ = geom.pad
    x5 = x if x.dim() == 5 else x.unsqueeze(2)
    n, c, d, h, w = x5.shape
    sn, _, sd, sh, sw = x5.stride()
    layout = gl.NVMMASharedLayout(swizzle_byte_width=2 * block, element_bitwidth=16, rank=5)
    descs, offs = [], []
    for ph in range(4):
        if ph >= sth * stw:
            descs += descs[:2]
            offs.append(offs[0])
            continue
        rho, sig = divmod(ph, stw)
        a, b = (rho - ph_) % sth, (sig - pw_) % stw
        offs.append(((rho - ph_) // sth, (sig - pw_) // stw))
        view = x5.as_strided((n, d, cdiv(h - a, sth), cdiv(w - b, stw), c),
                             (sn, sd, sth * sh, stw * sw, 1),
                             x5.storage_offset() + a * sh + b * sw)
        for box in (plan["RA"], max(plan["RB"], 1)):
            descs.append(TensorDescriptor(view, list(view.shape), list(view.stride()),
                                          [1, 1, box, plan["WB"], block], layout))
    return descs, tuple(offs)


def launch_tma(x, w, out, geom, cfg, stages: int) -> None:
    block, positions = cfg["BLOCK_N"], cfg["BLOCK_M"]
    plan = tma_plan(geom, positions, block)
    descs, offs = descriptors(x, geom, plan, block)
    gpt = min(block // geom.kg, geom.g)
    od, oh, ow = geom.out_spatial
    tiles_h = cdiv(oh, plan["ROWS"])
    items = geom.n * od * tiles_h
    # steps (items x depth taps) a program in whole rounds of the buffers
    ipp = cfg["ITEMS"]
    while (ipp * geom.t) % stages:
        ipp += 1
    w5 = w if w.dim() == 5 else w.unsqueeze(2)
    swk, swc, swt, swr, sws = w5.stride()
    out5 = out if out.dim() == 5 else out.unsqueeze(2)
    syn, syc, syd, syh, syw = out5.stride()
    w_vec = 8
    while w_vec > 1 and any(t % w_vec for t in (swk, geom.cg, swt, swr, sws)):
        w_vec //= 2
    flat_tma_kernel[(cdiv(geom.g, gpt), cdiv(items, ipp))](
        *descs, w, out, syn, syc, syd, syh, syw, geom.k, od, oh, ow, geom.pad[0], tiles_h,
        items, ipp, swk, swc, swt, swr, sws, CG=geom.cg, KG=geom.kg, GPT=gpt, T=geom.t,
        R=geom.r, S=geom.s, ROWS=plan["ROWS"], WB=plan["WB"], P=positions, XS=plan["XS"],
        NPH=plan["NPH"], BLOCK=block, STD=geom.stride[0], STH=geom.stride[1],
        STW=geom.stride[2], DLD=geom.dilation[0], DEPTH=geom.dims == 3, RA=plan["RA"],
        RB=plan["RB"], OFF=offs, STAGES=stages, W_VEC=w_vec, num_warps=cfg["num_warps"])


def main() -> None:
    configs_csv, out_csv = sys.argv[1], sys.argv[2]
    stage_counts = [int(s) for s in sys.argv[3:] if s.isdigit()] or [2, 3]
    dims = (3,) if "--3d" in sys.argv else (2,) if "--2d" in sys.argv else (2, 3)
    dtype = "bfloat16" if "--bf16" in sys.argv else "float16"
    problems = {p.id: (i, p) for i, p in enumerate(
        suite_layers("issue6", dtype, "grouped"))}
    with open(configs_csv) as f:
        listed = [(r["problem_id"].replace("/float16", f"/{dtype}"), r["config"])
                  for r in csv.DictReader(f)]
    wanted = [(pid, cid) for pid, cid in listed if "WGMMA=1" in cid]
    if "--all" in sys.argv[3:]:
        # every WGMMA config the family offers each layer, and the listed others (the
        # shipped kernel alone: the layer's fastest mma.sync configs)
        stage_counts = [2]
        fam = grouped_flat.GroupedFlatFamily()
        spec = spec_of(torch.device("cuda"))
        wanted = [(pid, c.id) for pid, (_, p) in problems.items() if p.geom.dims in dims
                  for c in fam.candidates(trim_dead_taps(p.geom), spec) if c.config.get("WGMMA")]
        wanted += [(pid, cid) for pid, cid in listed if "WGMMA=1" not in cid]

    def rows_of(pid: str, cid: str) -> list[dict]:
        i, p = problems[pid]
        g = p.geom
        x, w, b = make_tensors(g, "cuda", seed=i)
        ref = reference(g, x, w, None)
        cand = parse_candidate(cid)
        shipped = torch.empty_like(ref, dtype=x.dtype)
        rows = []
        if not cand.config.get("WGMMA"):
            us = bench_graph(lambda: run_candidate(cand, x, w, None, g, out=shipped), REP_MS)
            return [dict(problem_id=pid, config=cid, stages=0, rel_err=None,
                         shipped_us=round(us * 1e3, 3), tma_us=None, error="")]
        for stages in stage_counts:
            row = dict(problem_id=pid, config=cid, stages=stages, rel_err=None,
                       shipped_us=None, tma_us=None, error="")
            y = torch.full_like(ref, float("nan"), dtype=x.dtype)
            try:
                launch_tma(x, w, y, g, cand.config, stages)
                torch.cuda.synchronize()
                row["rel_err"] = rel_err(y, ref)
                if row["rel_err"] < 1e-2:
                    a, t = paired_graph_times(
                        lambda: run_candidate(cand, x, w, None, g, out=shipped),
                        lambda y=y, st=stages: launch_tma(x, w, y, g, cand.config, st), REP_MS)
                    row.update(shipped_us=round(a * 1e3, 3), tma_us=round(t * 1e3, 3))
            except Exception as e:  # noqa: BLE001 - recorded in the row
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            print(row, flush=True)
            rows.append(row)
        return rows

    stream_rows(out_csv, (rows_of(pid, cid) for pid, cid in wanted
                          if pid in problems and problems[pid][1].geom.dims in dims))


if __name__ == "__main__":
    main()
