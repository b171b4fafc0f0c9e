"""A forward grouped-conv kernel from shared-memory input rows (Gluon; the forward twin of
``kernels/wgrad_grouped_halo.py``, not registered: device call 140 found it 0.5-1.0x the
forward model's pick, validation/results/grouped_halo_h100/) against that pick and cuDNN.

    python3 validation/gpu/probe_halo_forward.py OUT.csv PROBLEM_IDS

For each problem (comma-separated ids), every (ROWS, TILE_W, BLOCK_N, num_warps, programs
a group pack) of the probe's space is checked against cuDNN in float32 and timed with the
sweep's timer (CUDA-graph replay, L2 flushed, median); one row per (problem, candidate).

The kernel: per item (ROWS output rows x TILE_W output columns of one image) a program
copies the input rows the taps read into shared memory once (``copy_halo``: S column
copies, cp.async, double-buffered), and each output row p adds, for every tap (r, s), row
p * stride + r * dilation of copy s (A: [TILE_W pixels, channels]) times the tap's
block-diagonal filter block (B, in registers for the whole program). No epilogue.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import torch
import torch.nn.functional as F
from convdispatch.data.problems import problem_by_id
from convdispatch.dispatcher import decide
from convdispatch.dispatcher.launch import as5d, launch
from convdispatch.kernels.base import ConvCall
from convdispatch.kernels.common import cdiv, oriented_filter, strides5
from convdispatch.kernels.device import spec_of
from convdispatch.kernels.wgrad_grouped_halo import HAVE_GLUON, halo_consts
from convdispatch.validation.inputs import make_inputs, seed_of
from convdispatch.validation.probe_io import MAX_REL_ERR, checked_time, write_rows
from convdispatch.validation.timing import CudaTimer, TimingSettings

SMEM = 227 * 1024

if HAVE_GLUON:
    from convdispatch.kernels.wgrad_grouped_halo import copy_halo, item_origin
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2

    @gluon.jit
    def _filter_tap(w_ptr, T: gl.constexpr, pack, KTOT, swk, swc, swr, sws,
                    CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, S: gl.constexpr,
                    TAPS: gl.constexpr, BLOCK: gl.constexpr, TRANSPOSED: gl.constexpr,
                    LW: gl.constexpr, B_L: gl.constexpr):
        """Tap T's block-diagonal [input channel, output channel] block of the pack, as
        the dot's B operand (zeros off the groups' blocks and past the filter's taps)."""
        c = gl.expand_dims(gl.arange(0, BLOCK, layout=gl.SliceLayout(1, LW)), 1)
        k = gl.expand_dims(gl.arange(0, BLOCK, layout=gl.SliceLayout(0, LW)), 0)
        k_glob = pack * (GPT * KG) + k
        ok = ((c // CG) == (k // KG)) & (k < GPT * KG) & (k_glob < KTOT) & (T < TAPS)
        if TRANSPOSED:  # dgrad: the stored filter's rows are this call's input channels
            off = (k % KG) * swk + (pack * (GPT * CG) + c) * swc
        else:
            off = k_glob * swk + (c % CG) * swc
        b = gl.load(w_ptr + off + (T // S) * swr + (T % S) * sws, mask=ok, other=0.0)
        return gl.convert_layout(b, B_L)

    @gluon.jit
    def _ftap(acc, x_rows, b, T: gl.constexpr, BASE: gl.constexpr, S: gl.constexpr,
              HR: gl.constexpr, DLH: gl.constexpr, A_L: gl.constexpr):
        """acc + tap T's input row (copy T % S, T // S dilated rows below BASE) x b."""
        a = x_rows.index(BASE + (T % S) * HR + (T // S) * DLH).load(A_L)
        return mma_v2(a, b, acc)

    @gluon.jit
    def _out_row(x_rows, b0, b1, b2, b3, b4, b5, b6, b7, b8, BUF: gl.constexpr,
                 P: gl.constexpr, R: gl.constexpr, S: gl.constexpr, HR: gl.constexpr,
                 STH: gl.constexpr, DLH: gl.constexpr,
                 TILE_W: gl.constexpr, BLOCK: gl.constexpr, MMA: gl.constexpr,
                 A_L: gl.constexpr):
        """Output row P of the item in buffer BUF: sum over taps of input row x filter."""
        acc = gl.zeros([TILE_W, BLOCK], gl.float32, MMA)
        BASE: gl.constexpr = BUF * S * HR + P * STH
        acc = _ftap(acc, x_rows, b0, 0, BASE, S, HR, DLH, A_L)
        if R * S > 1:
            acc = _ftap(acc, x_rows, b1, 1, BASE, S, HR, DLH, A_L)
        if R * S > 2:
            acc = _ftap(acc, x_rows, b2, 2, BASE, S, HR, DLH, A_L)
        if R * S > 3:
            acc = _ftap(acc, x_rows, b3, 3, BASE, S, HR, DLH, A_L)
        if R * S > 4:
            acc = _ftap(acc, x_rows, b4, 4, BASE, S, HR, DLH, A_L)
        if R * S > 5:
            acc = _ftap(acc, x_rows, b5, 5, BASE, S, HR, DLH, A_L)
        if R * S > 6:
            acc = _ftap(acc, x_rows, b6, 6, BASE, S, HR, DLH, A_L)
        if R * S > 7:
            acc = _ftap(acc, x_rows, b7, 7, BASE, S, HR, DLH, A_L)
        if R * S > 8:
            acc = _ftap(acc, x_rows, b8, 8, BASE, S, HR, DLH, A_L)
        return acc

    @gluon.jit
    def _copy(item, end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw, dlw, TILES_H,
              TILES_W, sxn, sxh, sxw, BUF: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
              HR: gl.constexpr, ROWS: gl.constexpr, TILE_W: gl.constexpr, STH: gl.constexpr,
              DLH: gl.constexpr, LX: gl.constexpr):
        """``copy_halo`` of item ``item`` (nothing past ``end``)."""
        n, oh0, ow0 = item_origin(item, TILES_H, TILES_W, ROWS, TILE_W)
        copy_halo(n, oh0, ow0, item < end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw,
                  dlw, sxn, sxh, sxw, BUF, R, S, HR, ROWS, TILE_W, STH, DLH, LX)

    @gluon.jit
    def _item_out(x_rows, y_ptr, item, end, pack, b0, b1, b2, b3, b4, b5, b6, b7, b8, KTOT,
                  OH, OW, TILES_H, TILES_W, syn, syh, syw, BUF: gl.constexpr,
                  KG: gl.constexpr, GPT: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
                  HR: gl.constexpr, ROWS: gl.constexpr,
                  STH: gl.constexpr, DLH: gl.constexpr, TILE_W: gl.constexpr,
                  BLOCK: gl.constexpr, MMA: gl.constexpr, A_L: gl.constexpr):
        """Every output row of the item in buffer BUF, stored."""
        n, oh0, ow0 = item_origin(item, TILES_H, TILES_W, ROWS, TILE_W)
        j = gl.arange(0, TILE_W, layout=gl.SliceLayout(1, MMA))
        k = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, MMA))
        k_glob = pack * (GPT * KG) + k
        col_ok = gl.expand_dims(ow0 + j < OW, 1) & gl.expand_dims((k < GPT * KG)
                                                                   & (k_glob < KTOT), 0)
        off = gl.expand_dims((ow0 + j) * syw, 1) + gl.expand_dims(k_glob, 0)
        for p in gl.static_range(ROWS):
            acc = _out_row(x_rows, b0, b1, b2, b3, b4, b5, b6, b7, b8, BUF, p, R, S, HR,
                           STH, DLH, TILE_W, BLOCK, MMA, A_L)
            ok = col_ok & (item < end) & (oh0 + p < OH)
            gl.store(y_ptr + n * syn + (oh0 + p) * syh + off,
                     acc.to(y_ptr.dtype.element_ty), mask=ok)

    @gluon.jit
    def grouped_halo_kernel(
        x_ptr, w_ptr, y_ptr,
        CTOT, KTOT, H, W, OH, OW, pdh, pdw, stw, dlw, TILES_H, TILES_W, ITEMS,
        ITEMS_PER_PROG, sxn, sxh, sxw, syn, syh, syw, swk, swc, swr, sws,
        CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, R: gl.constexpr,
        S: gl.constexpr, ROWS: gl.constexpr, TILE_W: gl.constexpr, BLOCK: gl.constexpr,
        HR: gl.constexpr, XALLOC: gl.constexpr, STH: gl.constexpr, DLH: gl.constexpr,
        TRANSPOSED: gl.constexpr,
    ):
        NW: gl.constexpr = gl.num_warps()
        TC: gl.constexpr = BLOCK // 8
        LX: gl.constexpr = gl.BlockedLayout([1, 1, 8], [1, 32 // TC, TC], [NW, 1, 1], [2, 1, 0])
        LW: gl.constexpr = gl.BlockedLayout([1, 1], [32 // BLOCK, BLOCK], [NW, 1], [1, 0])
        L_CH: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(1, LX))
        MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[1, NW],
                                                      instr_shape=[16, 8])
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        SH: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1,
                                                   order=[2, 1, 0])
        SH2: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1,
                                                    order=[1, 0])
        x_shape: gl.constexpr = [XALLOC, TILE_W, BLOCK]
        x_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, x_shape, SH)
        x_rows = x_smem._reinterpret(x_ptr.dtype.element_ty, x_shape, SH2)
        pack = gl.program_id(0)
        first = gl.program_id(1) * ITEMS_PER_PROG
        end = gl.minimum(first + ITEMS_PER_PROG, ITEMS)
        ch = gl.arange(0, BLOCK, layout=L_CH)
        c_glob = pack * (GPT * CG) + ch
        c_ok = (ch < GPT * CG) & (c_glob < CTOT)
        T: gl.constexpr = R * S
        b0 = _filter_tap(w_ptr, 0, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b1 = _filter_tap(w_ptr, 1, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b2 = _filter_tap(w_ptr, 2, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b3 = _filter_tap(w_ptr, 3, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b4 = _filter_tap(w_ptr, 4, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b5 = _filter_tap(w_ptr, 5, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b6 = _filter_tap(w_ptr, 6, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b7 = _filter_tap(w_ptr, 7, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        b8 = _filter_tap(w_ptr, 8, pack, KTOT, swk, swc, swr, sws, CG, KG, GPT, S, T, BLOCK,
                         TRANSPOSED, LW, B_L)
        _copy(first, end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw, dlw, TILES_H,
                  TILES_W, sxn, sxh, sxw, 0, R, S, HR, ROWS, TILE_W, STH, DLH, LX)
        cp.commit_group()
        for it in range(0, ITEMS_PER_PROG, 2):
            _copy(first + it + 1, end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw,
                      dlw, TILES_H, TILES_W, sxn, sxh, sxw, 1, R, S, HR, ROWS, TILE_W, STH, DLH,
                      LX)
            cp.commit_group()
            cp.wait_group(1)
            gl.thread_barrier()
            _item_out(x_rows, y_ptr, first + it, end, pack, b0, b1, b2, b3, b4, b5, b6, b7,
                      b8, KTOT, OH, OW, TILES_H, TILES_W, syn, syh, syw, 0, KG, GPT, R, S, HR,
                      ROWS, STH, DLH, TILE_W, BLOCK, MMA, A_L)
            gl.thread_barrier()
            _copy(first + it + 2, end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw,
                      dlw, TILES_H, TILES_W, sxn, sxh, sxw, 0, R, S, HR, ROWS, TILE_W, STH, DLH,
                      LX)
            cp.commit_group()
            cp.wait_group(1)
            gl.thread_barrier()
            _item_out(x_rows, y_ptr, first + it + 1, end, pack, b0, b1, b2, b3, b4, b5, b6,
                      b7, b8, KTOT, OH, OW, TILES_H, TILES_W, syn, syh, syw, 1, KG, GPT, R, S,
                      HR, ROWS, STH, DLH, TILE_W, BLOCK, MMA, A_L)
            gl.thread_barrier()
        cp.wait_group(0)


def launch_grouped_halo(call, cfg) -> None:
    """Launch ``grouped_halo_kernel`` on a forward ConvCall (or a dgrad twin's call)."""
    g = call.geom
    tw, bn, nw = cfg["TILE_W"], cfg["BLOCK_N"], cfg["num_warps"]
    rows = cfg["BLOCK_M"] // tw
    gpt = max(1, min(bn // max(g.kg, g.cg), g.g))
    _, oh, ow = g.out_spatial
    tiles_h, tiles_w = cdiv(oh, rows), cdiv(ow, tw)
    items = g.n * tiles_h * tiles_w
    progs = cfg.get("SPLIT_K", 1)  # programs a pack (each a run of items)
    per = cdiv(items, progs)
    w, (swk, swc, _, swr, sws) = oriented_filter(call)
    sxn, _, _, sxh, sxw = strides5(call.x)
    syn, _, _, syh, syw = strides5(call.out)
    grouped_halo_kernel[(cdiv(g.g, gpt), cdiv(items, per))](
        call.x, w, call.out, g.c, g.k, g.h, g.w, oh, ow, g.pad[1], g.pad[2], g.stride[2],
        g.dilation[2], tiles_h, tiles_w, items, per, sxn, sxh, sxw, syn, syh, syw,
        swk, swc, swr, sws, CG=g.cg, KG=g.kg, GPT=gpt, R=g.r, S=g.s, ROWS=rows, TILE_W=tw,
        BLOCK=bn, **halo_consts(g, rows, nw), STH=g.stride[1], DLH=g.dilation[1],
        TRANSPOSED=call.transposed_w, num_warps=nw)


def configs(g):
    _, oh, ow = g.out_spatial
    bn = 16 if max(g.cg, g.kg) <= 16 else 32
    for tw in (16, 32):
        if tw > 16 and tw >= 2 * ow:
            continue
        for rows in (2, 4, 8):
            for nw in (1, 2, 4):
                if nw > bn // 8 or halo_consts(g, rows, nw)["XALLOC"] * tw * bn * 2 > SMEM:
                    continue
                for progs in (4, 8, 16, 32, 64):
                    yield dict(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, num_warps=nw,
                               SPLIT_K=progs)


def main(argv: list[str]) -> int:
    out_csv, pids = argv[0], argv[1]
    torch.backends.cudnn.benchmark = True
    timer = CudaTimer(TimingSettings(warmup_ms=2, rep_ms=5))
    dev = spec_of("cuda")
    rows = []
    for pid in pids.split(","):
        g = problem_by_id(pid).geom
        x, w, _ = make_inputs(g, "cuda", seed_of(pid))
        conv = partial(F.conv2d, stride=g.stride[1:], padding=g.pad[1:],
                       dilation=g.dilation[1:], groups=g.g)
        ref = conv(x.float(), w.float())
        cudnn_us = timer.time(partial(conv, x, w))[0]
        out = torch.empty_like(ref, dtype=x.dtype).contiguous(memory_format=torch.channels_last)
        pick = decide(g, dev).candidate
        run = partial(launch, pick, x, w, None, g, out)
        got = checked_time(f"{pid} {pick.id}", run, out, ref, timer, lambda r=run: r)
        pick_us = round(got[0], 3) if got else math.nan
        rows.append(dict(problem_id=pid, candidate=pick.id, model_pick=1, us=pick_us,
                         cudnn_us=round(cudnn_us, 3), rel_err=got[1] if got else math.nan,
                         ok=int(bool(got) and got[1] < MAX_REL_ERR)))
        best = None
        for cfg in configs(g):
            out = torch.full_like(out, math.nan)
            call = ConvCall(x=as5d(x, 2), w=as5d(w, 2), out=as5d(out, 2), bias=None,
                            residual=None, geom=g)
            run = partial(launch_grouped_halo, call, cfg)
            label = ";".join(f"{k}={v}" for k, v in cfg.items())
            got = checked_time(f"{pid} halo {label}", run, out, ref, timer, lambda r=run: r)
            if got is None:
                continue
            us, err = got
            ok = err < MAX_REL_ERR
            rows.append(dict(problem_id=pid, candidate=f"grouped_halo:{label}", model_pick=0,
                             us=round(us, 3), cudnn_us=round(cudnn_us, 3), rel_err=err,
                             ok=int(ok)))
            if ok and (best is None or us < best[0]):
                best = (us, label)
        got = f"halo {best[0]:.1f} (x{cudnn_us / best[0]:.2f}) {best[1]}" if best else "halo -"
        print(f"{pid}: cudnn {cudnn_us:.1f} | pick {pick_us:.1f} (x{cudnn_us / pick_us:.2f}) "
              f"{pick.id} | {got}", flush=True)
        write_rows(out_csv, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
