"""How fast ``grouped_flat``'s input copies could be through the tensor memory accelerator
(TMA) instead of cp.async: a copy-only kernel of the family's loop, both ways.

    python3 validation/gpu/probe_tma_phases.py OUT.csv [CHANNELSxPOSITIONS ...]

Call 289 (``probe_flat_stages``) found the strided layers' time in the copies: without them
ResNeXt-50 layer2.0 at batch 32 took 15.8 us of 29.4 (H200). Here one Gluon kernel walks a
program's items as ``grouped_flat`` does (two buffers, the next item's copies in flight
while the current one is waited for) and copies each item's stride-phase images of one
pack of channels, then stores zeros where the item's outputs go (so the output crosses
memory as it does there), with no mma:

- cp.async: ``flat_grid.copy_phases`` into the swizzled rows, as the WGMMA configs copy;
- TMA: each phase image is a strided view of the input ([N * H / STH, W / STW, C], its
  rows the phase's input rows), loaded as boxes of whole grid rows (a box's rows and
  columns are powers of two: the grid is WB = next_pow2(OW + BMAX) wide and an item's
  ROWS + AMAX input rows are at most two boxes), completing on an mbarrier a buffer.

Rows of consecutive images are adjacent in the merged N * H axis, so an item's first row
of padding reads the row above it from the previous image (its outputs are not checked:
bytes, not values, are what this measures). Timed with ``bench_layers.bench_graph``
(CUDA-graph replay, L2 flushed before each, median) for ITEMS of 2, 4 and the count that
makes one wave; each CHANNELSxPOSITIONS (default 32x128) a copied row's channels (the
pack: 32 for the family's 32-wide tiles, 64 for two of them) and an item's positions.
"""

from __future__ import annotations

import sys

import torch
from convdispatch.kernels.base import next_pow2
from convdispatch.kernels.common import cdiv
from convdispatch.kernels.flat_grid import copy_layout, copy_phases, flat_consts, unit_rows
from convdispatch.validation.bench_layers import bench_graph, suite_layers
from convdispatch.validation.probe_io import stream_rows
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

REP_MS = 5


@gluon.jit
def _store_zeros(out_ptr, item, end, pack, OH, OW, K, TILES_H, syn, syh, syw,
                 CB: gl.constexpr, ROWS: gl.constexpr, WP: gl.constexpr, P: gl.constexpr,
                 LX: gl.constexpr):
    f = gl.arange(0, P, layout=gl.SliceLayout(1, LX))
    j = gl.arange(0, CB, layout=gl.SliceLayout(0, LX))
    n = item // TILES_H
    oh = (item % TILES_H) * ROWS + f // WP
    q = f % WP
    ok = (item < end) & (f // WP < ROWS) & (q < OW) & (oh < OH)
    k = pack * CB + j
    off = gl.expand_dims(n * syn + oh * syh + q * syw, 1) + gl.expand_dims(k, 0)
    gl.store(out_ptr + off, gl.zeros([P, CB], out_ptr.dtype.element_ty, LX),
             mask=gl.expand_dims(ok, 1) & gl.expand_dims(k < K, 0))


@gluon.jit
def _tma_issue(item, items, da0, db0, da1, db1, da2, db2, da3, db3, sa, sb, bar, pack, H2,
               TILES_H, BUF: gl.constexpr, NPH: gl.constexpr, STW: gl.constexpr,
               ROWS: gl.constexpr, RA: gl.constexpr, RB: gl.constexpr, WB: gl.constexpr,
               CB: gl.constexpr, PH0: gl.constexpr, PW0: gl.constexpr):
    """Every phase image of ``item`` (clamped to the last) into buffer BUF: boxes of RA and
    RB rows, one mbarrier."""
    it = gl.minimum(item, items - 1)
    row0 = (it // TILES_H) * H2 + (it % TILES_H) * ROWS
    mbarrier.expect(bar, NPH * (RA + RB) * WB * CB * 2)
    descs_a = (da0, da1, da2, da3)
    descs_b = (db0, db1, db2, db3)
    for ph in gl.static_range(NPH):
        # the phase's first input row and column relative to the item's (padding: -1)
        r = row0 - (PH0 if ph // STW == 0 else 0)
        c = -(PW0 if ph % STW == 0 else 0)
        tma.async_copy_global_to_shared(descs_a[ph], [r, c, pack * CB], bar,
                                        sa.index(BUF * NPH + ph))
        if RB > 0:
            tma.async_copy_global_to_shared(descs_b[ph], [r + RA, c, pack * CB], bar,
                                            sb.index(BUF * NPH + ph))


@gluon.jit
def tma_copy_kernel(da0, db0, da1, db1, da2, db2, da3, db3, out_ptr, items, ipp, H2,
                    TILES_H, OH, OW, K, syn, syh, syw, ROWS: gl.constexpr,
                    NPH: gl.constexpr, STW: gl.constexpr, RA: gl.constexpr,
                    RB: gl.constexpr, RBA: gl.constexpr, WB: gl.constexpr,
                    CB: gl.constexpr, P: gl.constexpr, PH0: gl.constexpr, PW0: gl.constexpr,
                    STORE: gl.constexpr):
    pack = gl.program_id(0)
    first = gl.program_id(1) * ipp
    end = gl.minimum(first + ipp, items)
    LX: gl.constexpr = copy_layout(CB, gl.num_warps())
    sa = gl.allocate_shared_memory(da0.dtype, [2 * NPH, RA, WB, CB], da0.layout)
    sb = gl.allocate_shared_memory(db0.dtype, [2 * NPH, RBA, WB, CB], db0.layout)
    bars = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(bars.index(i), count=1)
    _tma_issue(first, items, da0, db0, da1, db1, da2, db2, da3, db3, sa, sb, bars.index(0),
               pack, H2, TILES_H, 0, NPH, STW, ROWS, RA, RB, WB, CB, PH0, PW0)
    for it in range(0, ipp, 2):
        for buf in gl.static_range(2):
            _tma_issue(first + it + buf + 1, items, da0, db0, da1, db1, da2, db2, da3, db3,
                       sa, sb, bars.index(1 - buf), pack, H2, TILES_H, 1 - buf, NPH, STW,
                       ROWS, RA, RB, WB, CB, PH0, PW0)
            mbarrier.wait(bars.index(buf), (it // 2) & 1)
            if STORE:
                _store_zeros(out_ptr, first + it + buf, end, pack, OH, OW, K, TILES_H, syn,
                             syh, syw, CB, ROWS, WB, P, LX)
    # the last issue's copies land before the program ends
    mbarrier.wait(bars.index(0), (ipp // 2) & 1)


@gluon.jit
def cp_copy_kernel(x_ptr, out_ptr, items, ipp, H, W, pdh, pdw, TILES_H, OH, OW, K, sxn, sxh,
                   sxw, syn, syh, syw, ROWS: gl.constexpr, WP: gl.constexpr,
                   XP: gl.constexpr, XNEED: gl.constexpr, XCOPY: gl.constexpr,
                   NPH: gl.constexpr, STH: gl.constexpr, STW: gl.constexpr,
                   CB: gl.constexpr, P: gl.constexpr, STORE: gl.constexpr):
    pack = gl.program_id(0)
    first = gl.program_id(1) * ipp
    end = gl.minimum(first + ipp, items)
    LX: gl.constexpr = copy_layout(CB, gl.num_warps())
    x_units = unit_rows(x_ptr.dtype.element_ty, 2 * NPH * XP, CB, True)
    ch = gl.expand_dims(pack * CB + gl.arange(0, CB, layout=gl.SliceLayout(0, LX)), 0)
    cok = ch < K
    copy_phases(x_units, x_ptr, first // TILES_H, (first % TILES_H) * ROWS, first < end, ch,
                cok, H, W, pdh, pdw, sxn, sxh, sxw, 0, WP, XP, XNEED, XCOPY, NPH, STH, STW,
                LX, True)
    cp.commit_group()
    for it in range(0, ipp, 2):
        for buf in gl.static_range(2):
            nxt = first + it + buf + 1
            copy_phases(x_units, x_ptr, nxt // TILES_H, (nxt % TILES_H) * ROWS, nxt < end,
                        ch, cok, H, W, pdh, pdw, sxn, sxh, sxw, 1 - buf, WP, XP, XNEED,
                        XCOPY, NPH, STH, STW, LX, True)
            cp.commit_group()
            cp.wait_group(1)
            gl.thread_barrier()
            if STORE:
                _store_zeros(out_ptr, first + it + buf, end, pack, OH, OW, K, TILES_H, syn,
                             syh, syw, CB, ROWS, WP, P, LX)
            gl.thread_barrier()
    cp.wait_group(0)


def tma_setup(x: torch.Tensor, geom, positions: int, cb: int) -> dict:
    """Descriptors and constants of the TMA copies of ``geom`` (2D, channels_last, pad of
    at most one row and column of each phase) for items of ``positions`` positions."""
    _, sth, stw = geom.stride
    _, oh, ow = geom.out_spatial
    amax = (geom.r - 1) // sth
    bmax = (geom.s - 1) // stw
    wb = next_pow2(ow + bmax)
    rows = max(1, min(positions // wb, oh))
    need = rows + amax
    ra = 1 << (need.bit_length() - 1)
    rb = need - ra
    if rb & (rb - 1):
        raise ValueError(f"{need} input rows an item are not two boxes of powers of two")
    h2 = cdiv(geom.h, sth)
    layout = gl.NVMMASharedLayout(swizzle_byte_width=2 * cb, element_bitwidth=16, rank=3)
    descs = []
    n, c, h, w = x.shape
    sn, _, sh, sw = x.stride()
    for ph in range(4):
        if ph >= sth * stw:
            descs += descs[:2]
            continue
        rho, sig = divmod(ph, stw)
        a = (rho - geom.pad[1]) % sth
        b = (sig - geom.pad[2]) % stw
        view = x.as_strided((n * h2, cdiv(w - b, stw), c), (sth * sh, stw * sw, 1),
                            x.storage_offset() + a * sh + b * sw)
        for box in (ra, max(rb, 1)):
            descs.append(TensorDescriptor(view, list(view.shape), list(view.stride()),
                                          [box, wb, cb], layout))
    # the phase of the first row (column) that reads padding: -1 there
    return dict(descs=descs, ROWS=rows, RA=ra, RB=rb, WB=wb, P=positions,
                PH0=int(geom.pad[1] > 0), PW0=int(geom.pad[2] > 0), H2=h2)


def layer_rows(p, sms: int, cb: int, positions: int) -> list[dict]:
    g = p.geom
    n, _, oh, ow = g.n, None, *g.out_spatial[1:]
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(g.n, g.c, g.h, g.w, generator=gen).to("cuda", torch.float16).to(
        memory_format=torch.channels_last)
    out = torch.empty(g.n, g.k, oh, ow, device="cuda", dtype=torch.float16).to(
        memory_format=torch.channels_last)
    packs = cdiv(g.k, cb)
    try:
        t = tma_setup(x, g, positions, cb)
    except ValueError as e:
        print(f"{p.id} {cb}x{positions}: {e}", flush=True)
        return []
    c = flat_consts(g, positions, exact=True)
    tiles_h_tma = cdiv(oh, t["ROWS"])
    tiles_h_cp = cdiv(oh, c["ROWS"])
    syn, _, syh, syw = out.stride()
    sxn, _, sxh, sxw = x.stride()
    rows = []
    for how, tiles_h in (("tma", tiles_h_tma), ("cp.async", tiles_h_cp)):
        items = n * tiles_h
        one_wave = cdiv(items * packs, sms)
        for ipp in sorted({2, 4, one_wave + one_wave % 2}):
            for store in (True, False):
                grid = (packs, cdiv(items, ipp))
                if how == "tma":
                    def run(grid=grid, ipp=ipp, store=store, items=items, tiles_h=tiles_h):
                        tma_copy_kernel[grid](
                            *t["descs"], out, items, ipp, t["H2"], tiles_h, oh, ow, g.k,
                            syn, syh, syw, ROWS=t["ROWS"], NPH=g.stride[1] * g.stride[2],
                            STW=g.stride[2], RA=t["RA"], RB=t["RB"], RBA=max(t["RB"], 1),
                            WB=t["WB"], CB=cb,
                            P=positions, PH0=t["PH0"], PW0=t["PW0"], STORE=store,
                            num_warps=4)
                else:
                    def run(grid=grid, ipp=ipp, store=store, items=items, tiles_h=tiles_h):
                        cp_copy_kernel[grid](
                            x, out, items, ipp, g.h, g.w, g.pad[1], g.pad[2], tiles_h, oh,
                            ow, g.k, sxn, sxh, sxw, syn, syh, syw, ROWS=c["ROWS"],
                            WP=c["WP"], XP=c["XP"], XNEED=c["XNEED"], XCOPY=c["XCOPY"],
                            NPH=c["NPH"], STH=g.stride[1], STW=g.stride[2], CB=cb,
                            P=positions, STORE=store, num_warps=4)
                try:
                    run()
                    torch.cuda.synchronize()
                    us = bench_graph(run, REP_MS) * 1e3
                    err = ""
                except Exception as e:  # noqa: BLE001 - recorded in the row
                    us, err = None, f"{type(e).__name__}: {str(e)[:300]}"
                rows.append(dict(problem_id=p.id, how=how, block_n=cb, positions=positions,
                                 items_per_program=ipp, programs=grid[0] * grid[1],
                                 store=int(store), us=us, min_bytes=g.min_bytes,
                                 gbps=None if us is None else round(g.min_bytes / us / 1e3, 1),
                                 error=err))
                print(rows[-1], flush=True)
    return rows


def main() -> None:
    out = sys.argv[1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    layers = [p for p in suite_layers("issue6", "float16", "grouped") if p.geom.dims == 2]
    # (channels a copied row, positions an item)
    shapes = [tuple(int(v) for v in a.split("x")) for a in sys.argv[2:]] or [(32, 128)]
    stream_rows(out, (layer_rows(p, sms, cb, pos) for p in layers for cb, pos in shapes))


if __name__ == "__main__":
    main()
