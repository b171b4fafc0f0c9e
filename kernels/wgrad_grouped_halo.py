"""Gradient of a few-channel grouped filter from input rows held in shared memory.

Plain Triton cannot read one shared-memory tile at several offsets, so the other grouped
wgrad families load the input once a filter tap (from L2: cp.async bypasses L1) and read
it from L2 about nine times for a 3x3 filter. This kernel is written in Gluon
(``triton.experimental.gluon``), which names shared memory. Per item (ROWS output rows x
TILE_W output columns of one image) a program copies into shared memory, once
(cp.async, double-buffered, two items an iteration so every offset is constant):
- dY, [ROWS, TILE_W, channels];
- the input rows the item's taps read, S times: copy s holds, for every output column,
  the input column that filter column s reads (stride and dilation folded in).
A filter tap (r, s) and output row p then read one [TILE_W, channels] row of copy s (halo
row p * stride + r * dilation), and one mma a row adds dY^T x that row into the tap's
[BLOCK, BLOCK] float32 accumulator: a pack of whole groups, block-diagonal. The input
crosses L2 S times, not R * S times. Splits are added in a fixed order
(``wgrad_gemm.reduce_splits``): no atomics.

Gluon has no interpreter: this family runs on GPUs only. tests/test_halo_wgrad.py
compiles it for sm_90 on the CPU; tests/test_gpu_grad.py runs it.
"""

from __future__ import annotations

from .base import Config, GradCall
from .common import cdiv
from .gluon_common import HAVE_GLUON, gluon_grouped_rejects, wgrad_operands, wide_tile_rejects
from .gluon_wgrad import GluonWgradFamily
from .grad_common import GradGrid
from .launcher import launch_kernel
from .wgrad_gemm import split_ok, split_slices

MAX_HALO_TAPS = 9  # accumulators the kernel holds, one a filter tap

if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    from triton.experimental.gluon.language.nvidia.ampere import mma_v2

    from .gluon_wgrad import pack_channels, store_taps

    @gluon.jit
    def _tap(acc, x_smem, y_smem, T: gl.constexpr, BUF: gl.constexpr, S: gl.constexpr,
             HR: gl.constexpr, ROWS: gl.constexpr, STH: gl.constexpr,
             DLH: gl.constexpr, A_L: gl.constexpr, B_L: gl.constexpr):
        """acc + dY^T x the input of filter tap T (row T // S, column T % S), one output
        row p at a time: halo row p * STH + (T // S) * DLH of halo copy T % S (the copy
        that holds filter column T % S's input of every output column)."""
        for p in gl.static_range(ROWS):
            a = y_smem.index(BUF * ROWS + p).permute((1, 0)).load(A_L)
            b = x_smem.index((BUF * S + T % S) * HR + p * STH + (T // S) * DLH).load(B_L)
            acc = mma_v2(a, b, acc)
        return acc

    @gluon.jit
    def _step(accs, x_smem, y_smem, BUF: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
              HR: gl.constexpr, ROWS: gl.constexpr, STH: gl.constexpr, DLH: gl.constexpr,
              A_L: gl.constexpr, B_L: gl.constexpr):
        """Every tap's dot over the item in buffer BUF (``accs``: one accumulator a tap)."""
        new = ()
        for t in gl.static_range(R * S):
            new = new + (_tap(accs[t], x_smem, y_smem, t, BUF, S, HR, ROWS, STH, DLH, A_L,
                              B_L),)
        return new

    @gluon.jit
    def item_origin(item, TILES_H, TILES_W, ROWS: gl.constexpr, TILE_W: gl.constexpr):
        """Image, first output row and first output column of an item (bands fastest)."""
        band = item % TILES_H
        rest = item // TILES_H
        return rest // TILES_W, band * ROWS, (rest % TILES_W) * TILE_W

    @gluon.jit
    def copy_halo(n, oh0, ow0, live, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw, dlw,
                  sxn, sxh, sxw, BUF: gl.constexpr, R: gl.constexpr,
                  S: gl.constexpr, HR: gl.constexpr, ROWS: gl.constexpr,
                  TILE_W: gl.constexpr, STH: gl.constexpr, DLH: gl.constexpr,
                  LX: gl.constexpr):
        """Start copying the input rows the taps of an item (image n, first output row
        oh0, first output column ow0) read into buffer BUF: S copies of HR rows (row
        (BUF * S + s) * HR + i), copy s holding filter column s's input of each output
        column (zeros past the input's edges, and everywhere unless ``live``); one row a
        warp at a time, so no rows are padded to a power of two."""
        G: gl.constexpr = gl.num_warps()
        L_ROW: gl.constexpr = gl.SliceLayout(1, gl.SliceLayout(2, LX))
        L_COL: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(2, LX))
        L_CH: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(1, LX))
        ch3 = gl.expand_dims(gl.expand_dims(gl.convert_layout(c_glob, L_CH), 0), 1)
        cok3 = gl.expand_dims(gl.expand_dims(gl.convert_layout(c_ok, L_CH), 0), 1)
        j = gl.arange(0, TILE_W, layout=L_COL)
        for q in gl.static_range(HR // G):
            i = q * G + gl.arange(0, G, layout=L_ROW)
            ih = oh0 * STH - pdh + i
            row_ok = (live & (i < (ROWS - 1) * STH + (R - 1) * DLH + 1) & (ih >= 0)
                      & (ih < H))
            row3 = gl.expand_dims(gl.expand_dims(n * sxn + ih * sxh, 1), 2)
            rok3 = gl.expand_dims(gl.expand_dims(row_ok, 1), 2)
            for s in gl.static_range(S):
                iw = (ow0 + j) * stw - pdw + s * dlw
                col3 = gl.expand_dims(gl.expand_dims(iw * sxw, 0), 2)
                cok = gl.expand_dims(gl.expand_dims((iw >= 0) & (iw < W), 0), 2)
                cp.async_copy_global_to_shared(x_smem.slice((BUF * S + s) * HR + q * G, G),
                                               x_ptr + (row3 + col3 + ch3),
                                               mask=rok3 & cok & cok3)

    @gluon.jit
    def _issue(item, end, x_smem, y_smem, x_ptr, dy_ptr, c_glob, c_ok, k_glob, k_ok,
               H, W, OH, OW, pdh, pdw, stw, dlw, TILES_H, TILES_W, sxn, sxh, sxw, syn, syh,
               syw, BUF: gl.constexpr, R: gl.constexpr, S: gl.constexpr, HR: gl.constexpr,
               ROWS: gl.constexpr, TILE_W: gl.constexpr, STH: gl.constexpr,
               DLH: gl.constexpr, LX: gl.constexpr):
        """Start copying an item's input rows (``copy_halo``) and dY block into buffer
        BUF, as one cp.async group."""
        n, oh0, ow0 = item_origin(item, TILES_H, TILES_W, ROWS, TILE_W)
        copy_halo(n, oh0, ow0, item < end, x_smem, x_ptr, c_glob, c_ok, H, W, pdh, pdw, stw,
                  dlw, sxn, sxh, sxw, BUF, R, S, HR, ROWS, TILE_W, STH, DLH, LX)
        L_ROW: gl.constexpr = gl.SliceLayout(1, gl.SliceLayout(2, LX))
        L_COL: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(2, LX))
        L_CH: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(1, LX))
        kg3 = gl.expand_dims(gl.expand_dims(gl.convert_layout(k_glob, L_CH), 0), 1)
        kok3 = gl.expand_dims(gl.expand_dims(gl.convert_layout(k_ok, L_CH), 0), 1)
        oh = oh0 + gl.arange(0, ROWS, layout=L_ROW)
        ow = ow0 + gl.arange(0, TILE_W, layout=L_COL)
        y_row = gl.expand_dims(gl.expand_dims(n * syn + oh * syh, 1), 2)
        y_col = gl.expand_dims(gl.expand_dims(ow * syw, 0), 2)
        y_rok = gl.expand_dims(gl.expand_dims((item < end) & (oh < OH), 1), 2)
        y_cok = gl.expand_dims(gl.expand_dims(ow < OW, 0), 2)
        cp.async_copy_global_to_shared(y_smem.slice(BUF * ROWS, ROWS),
                                       dy_ptr + (y_row + y_col + kg3),
                                       mask=y_rok & y_cok & kok3)
        cp.commit_group()

    @gluon.jit
    def wgrad_grouped_halo_kernel(
        dy_ptr, x_ptr, dw_ptr, ws_ptr,
        CTOT, KTOT, H, W, OH, OW, pdh, pdw, stw, dlw, TILES_H, TILES_W, ITEMS,
        ITEMS_PER_SPLIT,
        WS_STRIDE,
        syn, syh, syw, sxn, sxh, sxw, swk, swc, swr, sws,
        CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr, R: gl.constexpr,
        S: gl.constexpr, ROWS: gl.constexpr, TILE_W: gl.constexpr, BLOCK: gl.constexpr,
        HR: gl.constexpr, XALLOC: gl.constexpr, STH: gl.constexpr, DLH: gl.constexpr,
        SPLIT: gl.constexpr,
    ):
        NW: gl.constexpr = gl.num_warps()
        # Copies: runs of 8 channels of a pixel (16 bytes), pixels across threads and warps.
        TC: gl.constexpr = BLOCK // 8
        LX: gl.constexpr = gl.BlockedLayout([1, 1, 8], [1, 32 // TC, TC], [NW, 1, 1], [2, 1, 0])
        L_CH: gl.constexpr = gl.SliceLayout(0, gl.SliceLayout(1, LX))
        MMA: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0],
                                                      warps_per_cta=[1, NW],
                                                      instr_shape=[16, 8])
        A_L: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
        B_L: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)
        SH: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1,
                                                   order=[2, 1, 0])
        pack = gl.program_id(0)
        pid_s = gl.program_id(1)
        # Rows of [column, channel]: (buffer, halo copy, halo row) and (buffer, dY row).
        x_shape: gl.constexpr = [XALLOC, TILE_W, BLOCK]
        y_shape: gl.constexpr = [2 * ROWS, TILE_W, BLOCK]
        x_smem = gl.allocate_shared_memory(x_ptr.dtype.element_ty, x_shape, SH)
        y_smem = gl.allocate_shared_memory(dy_ptr.dtype.element_ty, y_shape, SH)
        # The same bytes (unswizzled, row-major either way) as a stack of [column, channel]
        # rows: copies fill several rows at once, dots read one.
        SH2: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1,
                                                    order=[1, 0])
        x_rows = x_smem._reinterpret(x_ptr.dtype.element_ty, x_shape, SH2)
        y_rows = y_smem._reinterpret(dy_ptr.dtype.element_ty, y_shape, SH2)
        c_glob, c_ok, k_glob, k_ok, first, end, accs = pack_channels(
            pack, pid_s, CTOT, KTOT, ITEMS, ITEMS_PER_SPLIT, CG, KG, GPT, BLOCK, R, S, L_CH,
            MMA)
        # Two items an iteration, one a buffer, so every shared-memory offset is constant.
        _issue(first, end, x_smem, y_smem, x_ptr, dy_ptr, c_glob, c_ok, k_glob, k_ok, H, W, OH,
               OW, pdh, pdw, stw, dlw, TILES_H, TILES_W, sxn, sxh, sxw, syn, syh, syw, 0, R, S, HR,
               ROWS, TILE_W, STH, DLH, LX)
        for it in range(0, ITEMS_PER_SPLIT, 2):
            for buf in gl.static_range(2):
                # Copy the next item into the other buffer, then reduce this one's.
                _issue(first + it + buf + 1, end, x_smem, y_smem, x_ptr, dy_ptr, c_glob, c_ok,
                       k_glob, k_ok, H, W, OH, OW, pdh, pdw, stw, dlw, TILES_H, TILES_W, sxn,
                       sxh, sxw, syn, syh, syw, 1 - buf, R, S, HR, ROWS, TILE_W, STH, DLH, LX)
                cp.wait_group(1)
                gl.thread_barrier()
                accs = _step(accs, x_rows, y_rows, buf, R, S, HR, ROWS, STH, DLH, A_L, B_L)
                # The next copies overwrite the buffer just read.
                gl.thread_barrier()
        cp.wait_group(0)
        store_taps(accs, pack, pid_s, dw_ptr, ws_ptr, CTOT, KTOT, WS_STRIDE, swk, swc, swr,
                   sws, CG, KG, GPT, BLOCK, R, S, SPLIT, MMA)


def halo_rows(geom, rows: int) -> int:
    """Input rows an item of ``rows`` output rows reads."""
    return (rows - 1) * geom.stride[1] + (geom.r - 1) * geom.dilation[1] + 1


def halo_consts(geom, rows: int, warps: int) -> dict:
    """A copy's rows HR (the halo's, rounded up to whole warps: one row a warp a copy step)
    and the shared-memory rows of both buffers' S copies, XALLOC (a power of two, as Gluon
    shapes must be)."""
    hr = -(-halo_rows(geom, rows) // warps) * warps
    return dict(HR=hr, XALLOC=1 << (2 * geom.s * hr - 1).bit_length())


def _config(bn, rows, tw, warps, split) -> Config:
    return Config(BLOCK_M=rows * tw, TILE_W=tw, BLOCK_N=bn, SPLIT_K=split, num_warps=warps,
                  num_stages=2)


# (BLOCK_N, num_warps): mma warps split the tile's columns in eights (device call 135:
# one warp 1.22x slower than two on ResNeXt-50, validation/results/grouped_halo_h100/).
HALO_TILES = ((16, 2), (32, 2), (32, 4))
HALO_ROWS = (2, 4, 8, 16)
HALO_WIDTHS = (16, 32)  # TILE_W: one row is one dot's reduction (>= 16)
HALO_SPLITS = (1, 4, 8, 16, 32, 64)


class WgradGroupedHaloFamily(GluonWgradFamily):
    name = "wgrad_grouped_halo"
    summary = ("gradient of a few-channel grouped filter (Gluon): dY and the input rows an "
               "item's taps read copied once into shared memory, one mma a tap and output "
               "row, fixed-order split")
    configs = tuple(_config(bn, rows, tw, wp, sk) for sk in HALO_SPLITS
                    for bn, wp in HALO_TILES for rows in HALO_ROWS for tw in HALO_WIDTHS)

    def supports(self, geom) -> str | None:
        return gluon_grouped_rejects(geom, MAX_HALO_TAPS, geom.c, geom.k)

    def grid(self, geom, cfg: Config) -> GradGrid:
        """Packs of GPT groups, each reducing every tap over items of output rows."""
        tw = cfg["TILE_W"]
        rows = cfg["BLOCK_M"] // tw
        _, oh, ow = geom.out_spatial
        return self.pack_grid(geom, cfg, geom.n * cdiv(oh, rows) * cdiv(ow, tw), rows * tw)

    def smem_bytes(self, geom, cfg: Config) -> int:
        rows, tw, bn = cfg["BLOCK_M"] // cfg["TILE_W"], cfg["TILE_W"], cfg["BLOCK_N"]
        c = halo_consts(geom, rows, cfg["num_warps"])
        return (c["XALLOC"] + 2 * rows) * tw * bn * geom.elem_bytes

    def config_ok(self, geom, cfg, device) -> str | None:
        _, oh, ow = geom.out_spatial
        tw = cfg["TILE_W"]
        if reason := wide_tile_rejects(geom, cfg["BLOCK_N"]):
            return reason
        if tw > 16 and tw >= 2 * ow:
            return f"TILE_W={tw} is twice the {ow} output columns"
        if cfg["BLOCK_M"] // tw > max(2, 2 * oh):
            return f"{cfg['BLOCK_M'] // tw} rows exceed twice the {oh} output rows"
        return (split_ok(geom, cfg, device, self.grid(geom, cfg))
                or self.hard_ok(geom, cfg, device))

    def launch(self, call: GradCall, cfg: Config) -> None:
        g = call.geom
        tw, bn, split = cfg["TILE_W"], cfg["BLOCK_N"], cfg["SPLIT_K"]
        rows = cfg["BLOCK_M"] // tw
        tiles = self.grid(g, cfg)
        _, oh, ow = g.out_spatial
        _, sth, stw = g.stride
        _, dlh, dlw = g.dilation
        dy, x, strides = wgrad_operands(call)
        with split_slices(call, split, tiles.k_steps) as (per_split, ws, slices):
            launch_kernel(
                wgrad_grouped_halo_kernel, (tiles.mult, slices),
                dy, x, call.out, ws,
                g.c, g.k, g.h, g.w, oh, ow, g.pad[1], g.pad[2], stw, dlw, cdiv(oh, rows),
                cdiv(ow, tw), tiles.k_steps, per_split, g.k * g.cg * g.r * g.s, *strides,
                CG=g.cg, KG=g.kg, GPT=self.gpt(g, cfg), R=g.r, S=g.s, ROWS=rows, TILE_W=tw,
                BLOCK=bn, **halo_consts(g, rows, cfg["num_warps"]), STH=sth, DLH=dlh,
                SPLIT=split > 1, num_warps=cfg["num_warps"])
