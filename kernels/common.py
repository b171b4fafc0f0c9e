"""Triton pieces every family shares: output-row decomposition and the fused epilogue.

The fused epilogue computes ``act(conv + bias + residual)``: the residual is
added before the activation, as in a ResNet block's ``relu(bn(conv) + x)``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from .base import next_pow2
from .device import DeviceSpec, spec_of

# Programs a separate split-reduction pass is sized for (splitk's reduce_block, the wgrad
# families' reduce_tile): about two an SM, so that the pass is not latency-bound on a few.
REDUCE_PROGRAMS = 256


@triton.jit
def split_rows(offs_m, OD, OH, OW):
    """Output row index m -> (n, od, oh, ow) of an NDHW output."""
    ow = offs_m % OW
    t = offs_m // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    n = t // OD
    return n, od, oh, ow


@triton.jit
def pixel_block(pid_m, OD, OH, OW, TILES_H, TILES_W, TILE_H: tl.constexpr, TILE_W: tl.constexpr):
    """2D pixel tile ``pid_m`` -> (n, od) of its image and depth, (oh, ow) of its
    TILE_H x TILE_W pixels, and which of them lie inside the output."""
    tw_id = pid_m % TILES_W
    rest = pid_m // TILES_W
    th_id = rest % TILES_H
    rest = rest // TILES_H
    od = rest % OD
    n = rest // OD
    offs = tl.arange(0, TILE_H * TILE_W)
    oh = th_id * TILE_H + offs // TILE_W
    ow = tw_id * TILE_W + offs % TILE_W
    return n, od, oh, ow, (oh < OH) & (ow < OW)


@triton.jit
def tap_rows(m_mask, x_row, id0, ih0, iw0, kt, kr, ks, dld, dlh, dlw, D, H, W, sxd, sxh, sxw):
    """Filter tap (kt, kr, ks) of the FMA families -> which rows read inside the input
    and the rows' input offsets."""
    idd = id0 + kt * dld
    ih = ih0 + kr * dlh
    iw = iw0 + ks * dlw
    row_ok = m_mask & (idd >= 0) & (idd < D) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    return row_ok, x_row + idd * sxd + ih * sxh + iw * sxw


@triton.jit
def inside(i, n):
    """0 <= i < n in one unsigned compare (a negative i wraps past any size)."""
    return i.to(tl.uint32, bitcast=True) < n.to(tl.uint32)


@triton.jit
def tap_origin(x_row, id0, ih0, iw0, sxd, sxh, sxw, HAS_DEPTH: tl.constexpr):
    """Input offset of each row's filter origin (tap 0, 0, 0), computed once before the
    reduction loop so that a tap only adds one scalar to it."""
    off = x_row + ih0 * sxh + iw0 * sxw
    if HAS_DEPTH:
        off += id0 * sxd
    return off


@triton.jit
def first_step(it, c_blocks, R, S):
    """Step ``it`` of a flattened (t, r, s, channel block) loop -> (cb, ks, kr, kt)."""
    cb = it % c_blocks
    trs = it // c_blocks
    ks = trs % S
    tr = trs // S
    return cb, ks, tr % R, tr // R


@triton.jit
def next_step(cb, ks, kr, kt, c_blocks, R, S):
    """The step after (cb, ks, kr, kt): counters instead of per-step divisions by the
    run-time filter size."""
    cb += 1
    wrap = cb == c_blocks
    cb = tl.where(wrap, 0, cb)
    ks = tl.where(wrap, ks + 1, ks)
    wrap = ks == S
    ks = tl.where(wrap, 0, ks)
    kr = tl.where(wrap, kr + 1, kr)
    wrap = kr == R
    kr = tl.where(wrap, 0, kr)
    kt = tl.where(wrap, kt + 1, kt)
    return cb, ks, kr, kt


@triton.jit
def tap_at(ks, kr, kt, m_mask, D, H, W, x_origin, id0, ih0, iw0, dld, dlh, dlw,
           sxd, sxh, sxw, w_col, swt, swr, sws, HAS_DEPTH: tl.constexpr):
    """Filter tap (kt, kr, ks) -> which rows read inside the input, the rows' input
    offsets (``x_origin`` from ``tap_origin`` plus one scalar) and the tap's weight
    offsets."""
    dh = kr * dlh
    dw = ks * dlw
    row_ok = m_mask & inside(ih0 + dh, H) & inside(iw0 + dw, W)
    x_tap = dh * sxh + dw * sxw
    w_tap = kr * swr + ks * sws
    if HAS_DEPTH:
        dd = kt * dld
        row_ok = row_ok & inside(id0 + dd, D)
        x_tap += dd * sxd
        w_tap += kt * swt
    return row_ok, x_origin + x_tap, w_col + w_tap


@triton.jit
def activate(x, ACT: tl.constexpr):
    # Comparisons are written so NaN propagates as in torch (NaN < 0 is False).
    if ACT == 1:
        x = tl.where(x < 0, 0.0, x)
    elif ACT == 2:
        x = tl.where(x < 0, 0.0, tl.where(x > 6.0, 6.0, x))
    elif ACT == 3:
        x = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    elif ACT == 4:
        x = x * tl.sigmoid(x)
    return x


@triton.jit
def store_tile(acc, n, od, oh, ow, m_mask, offs_k, k_mask,
               out_ptr, syn, syc, syd, syh, syw,
               bias_ptr, res_ptr, srn, src, srd, srh, srw,
               HAS_BIAS: tl.constexpr, HAS_RES: tl.constexpr, ACT: tl.constexpr,
               INT64: tl.constexpr):
    """Epilogue: bias, residual, activation, cast, masked store of an [M, K] tile.

    Rows are given split into (n, od, oh, ow); ``offs_k`` are global output
    channels. ``k_mask`` is the caller's (a group must not write its neighbour's channels).
    """
    if INT64:
        n = n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    mask = m_mask[:, None] & k_mask[None, :]
    if HAS_BIAS:
        b = tl.load(bias_ptr + offs_k, mask=k_mask, other=0.0)
        acc = acc + b.to(tl.float32)[None, :]
    if HAS_RES:
        r_off = (n * srn + od * srd + oh * srh + ow * srw)[:, None] + (offs_k * src)[None, :]
        r = tl.load(res_ptr + r_off, mask=mask, other=0.0)
        acc = acc + r.to(tl.float32)
    acc = activate(acc, ACT)
    y_off = (n * syn + od * syd + oh * syh + ow * syw)[:, None] + (offs_k * syc)[None, :]
    tl.store(out_ptr + y_off, acc.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def tile_ids(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering of output tiles so neighbouring programs share operands in L2."""
    width = GROUP_M * num_pid_n
    group_id = pid // width
    first_m = group_id * GROUP_M
    size_m = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    return pid_m, pid_n


def persistent_programs(smem_bytes: int, device, residual_bytes: int = 0) -> int:
    """Programs of a persistent launch on ``device`` (a torch device or a DeviceSpec): one
    per SM, two where two tiles' shared memory fits on an SM (so one program's loads
    overlap the other's math). 0, meaning "run the one-program-a-tile kernel", where a
    fused residual's tile does not fit beside the pipeline: the persistent loop keeps
    its operand buffers live through the epilogue, so nothing aliases them there."""
    spec = device if isinstance(device, DeviceSpec) else spec_of(device)
    if spec.smem_bytes and smem_bytes + residual_bytes > spec.smem_bytes:
        return 0
    per_sm = 2 if 0 < 2 * (smem_bytes + residual_bytes) <= spec.smem_bytes else 1
    return spec.sm_count * per_sm


def persistent_cap(smem_bytes: int, call, cfg) -> int:
    """``persistent_programs`` for a forward call of a [BLOCK_M, BLOCK_N] output tile
    (its fused residual is one more such tile in shared memory)."""
    res = cfg["BLOCK_M"] * cfg["BLOCK_N"] * call.geom.elem_bytes if call.residual is not None else 0
    return persistent_programs(smem_bytes, call.x.device, res)


def pixel_grid(geom, block_m: int, tile_w: int, images: int = 1) -> tuple[int, int, int]:
    """(programs over the output pixels, tiles along OH, tiles along OW) for BLOCK_M
    pixels a program: a (block_m // tile_w // images) x tile_w block of ``images``
    consecutive images at one output depth (``pixel_block``; the box families' boxes of
    several images), or a flat run of output rows when tile_w is 0 (then the tile counts
    are 1)."""
    if not tile_w:
        return cdiv(geom.gemm_m, block_m), 1, 1
    od, oh, ow = geom.out_spatial
    tiles_h, tiles_w = cdiv(oh, block_m // tile_w // images), cdiv(ow, tile_w)
    return cdiv(geom.n, images) * od * tiles_h * tiles_w, tiles_h, tiles_w


def persistent_grid(tiles: int, programs_cap: int) -> tuple[int]:
    """Launch grid of a kernel that runs one tile a program (``programs_cap`` 0) or a
    persistent grid of at most ``programs_cap`` programs."""
    return (min(tiles, programs_cap) if programs_cap else tiles,)


def strides5(t) -> tuple[int, int, int, int, int]:
    """Strides of a 5D (N, C, D, H, W) view."""
    return tuple(t.stride())  # type: ignore[return-value]


def weight_strides(call) -> tuple[int, int, int, int, int]:
    """Strides of the filter as the call's kernel indexes it: (output channel, input
    channel, t, r, s); a ``transposed_w`` call swaps the stored filter's channel axes."""
    s = strides5(call.w)
    if call.transposed_w:
        return (s[1], s[0], *s[2:])
    return s


def oriented_filter(call) -> tuple:
    """(filter argument, its strides (k, c, t, r, s)) as a launcher's kernel indexes it
    (``weight_strides``). A ``flip_taps`` call (dgrad through the forward kernels) reads
    the taps in reverse: from the last tap (a view whose first element it is) with
    negated tap strides, so the flipped filter needs no copy and no extra launch."""
    s = weight_strides(call)
    if not call.flip_taps:
        return call.w, s
    return call.w[:, :, -1:, -1:, -1:], (s[0], s[1], -s[2], -s[3], -s[4])


def out_args(call) -> tuple:
    """Epilogue arguments shared by every family's launch."""
    res = call.residual if call.residual is not None else call.out
    return (call.out, *strides5(call.out),
            call.bias if call.bias is not None else call.out,
            res, *strides5(res))


def dot_precision(call) -> str:
    """Matrix-unit precision: tf32 for float32 when torch allows it for convs."""
    return "tf32" if call.allow_tf32 and call.geom.dtype == "float32" else "ieee"


def needs_int64(call) -> bool:
    """True when an element offset may not fit in int32."""
    limit = 2**31 - 1
    tensors = [getattr(call, name, None) for name in ("x", "w", "out", "residual", "dy")]
    return any(sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride())) >= limit
               for t in tensors if t is not None and t.numel())


def upcast_dot(call) -> bool:
    """bf16 tl.dot is wrong under the CPU interpreter; upcast its operands there only."""
    from .device import interpreter_enabled

    return interpreter_enabled() and call.geom.dtype == "bfloat16"


def cdiv(a: int, b: int) -> int:
    """Ceiling division on the host. ``triton.cdiv`` is a constexpr function whose Python
    call costs about 4 us, which the launchers pay several times a call."""
    return -(-a // b)


@triton.jit
def first_tap(phase, pad, dil, st, STEP):
    """Smallest filter tap r < STEP with (phase + pad - r * dil) divisible by ``st``:
    the first tap that reaches input coordinate ``phase`` (mod st) from an output
    pixel; the next are r + STEP, r + 2 STEP, ... (STEP = st / gcd(st, dil)). Returns
    a large sentinel when no tap does."""
    r0 = phase * 0 + (1 << 20)
    for j in range(0, STEP):
        hit = ((phase + pad - j * dil) % st == 0) & (r0 == (1 << 20))
        r0 = tl.where(hit, j, r0)
    return r0


@triton.jit
def phase_origin(phase, pad, dil, st, STEP):
    """First tap of a stride phase along one axis (``first_tap``) and the output
    coordinate offset it gives: the output read by input q * st + phase through tap
    r0 + i * STEP is q + base - i * (STEP * dil / st), exact, with no division per pixel."""
    r0 = first_tap(phase, pad, dil, st, STEP)
    return r0, (phase + pad - r0 * dil) // st


def tap_steps(geom) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per axis (d, h, w) of the gradient of the input: the tap step st / gcd(st, dil), how
    many taps each input phase visits at most (cdiv(taps, step)), and how far the output
    coordinate moves per step (step * dil / st)."""
    import math

    steps = tuple(st // math.gcd(st, dl) for st, dl in zip(geom.stride, geom.dilation))
    taps = (geom.t, geom.r, geom.s)
    visits = tuple(cdiv(t, s) for t, s in zip(taps, steps))
    moves = tuple(s * dl // st for s, dl, st in zip(steps, geom.dilation, geom.stride))
    return steps, visits, moves


@triton.jit
def phase_tap(tap, SI, RI, t0, r0, s0, tstep, rstep, sstep, qd, qh, qw, bd, bh, bw,
              ddd, ddh, ddw, T, R, S, OD, OH, OW):
    """Tap ``tap`` of a stride phase in the gradient of the input (see ``first_tap``) ->
    its filter tap, the output pixel each input pixel reads there, whether that output
    exists, and whether the tap exists at all."""
    si = tap % SI
    ri = (tap // SI) % RI
    ti = tap // (SI * RI)
    kt = t0 + ti * tstep
    kr = r0 + ri * rstep
    ks = s0 + si * sstep
    od = qd + bd - ti * ddd
    oh = qh + bh - ri * ddh
    ow = qw + bw - si * ddw
    tap_ok = (kt < T) & (kr < R) & (ks < S)
    out_ok = tap_ok & (od >= 0) & (oh >= 0) & (ow >= 0) & (od < OD) & (oh < OH) & (ow < OW)
    return kt, kr, ks, od, oh, ow, out_ok, tap_ok


@triton.jit
def pixel_tap_rows(offs_p, P, OD, OH, OW, kt, kr, ks, std, sth, stw, pdd, pdh, pdw,
                   dld, dlh, dlw, D, H, W):
    """Output pixels ``offs_p`` of the weight gradient's reduction and filter tap (kt, kr,
    ks) -> (n, od, oh, ow), which pixels exist, the input pixel each reads and whether it
    lies inside the input."""
    p_ok = offs_p < P
    n, od, oh, ow = split_rows(offs_p, OD, OH, OW)
    idd = od * std - pdd + kt * dld
    ih = oh * sth - pdh + kr * dlh
    iw = ow * stw - pdw + ks * dlw
    x_ok = p_ok & (idd >= 0) & (idd < D) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    return n, od, oh, ow, p_ok, idd, ih, iw, x_ok


@triton.jit
def output_pixels(offs_p, OD, OH, OW, std, sth, stw, pdd, pdh, pdw,
                  syn, syd, syh, syw, sxn, sxd, sxh, sxw, INT64: tl.constexpr):
    """Output pixels ``offs_p`` -> their dY offsets, the input corner (id0, ih0, iw0) of
    their filter window and the X offset of that corner."""
    n, od, oh, ow = split_rows(offs_p, OD, OH, OW)
    id0 = od * std - pdd
    ih0 = oh * sth - pdh
    iw0 = ow * stw - pdw
    if INT64:
        n = n.to(tl.int64)
    y_row = n * syn + od * syd + oh * syh + ow * syw
    x_row = n * sxn + id0 * sxd + ih0 * sxh + iw0 * sxw
    return y_row, x_row, id0, ih0, iw0


@triton.jit
def window_inside(id0, ih0, iw0, dd, dh, dw, D, H, W):
    """[pixels, columns]: whether input (id0 + dd, ih0 + dh, iw0 + dw) of each window
    corner and column offset lies inside the input."""
    return (inside(id0[:, None] + dd[None, :], D) & inside(ih0[:, None] + dh[None, :], H)
            & inside(iw0[:, None] + dw[None, :], W))


@triton.jit
def tap_columns(iw0, dlw, W, sxw, ch_off, ch_ok, KS: tl.constexpr):
    """Per filter column ks of a row of output pixels (input column ``iw0`` at ks = 0):
    the [pixels, channels] offsets of its input and which of them lie inside the image,
    as two tuples indexed by ks (the ``*_rows`` kernels)."""
    col_ok = ()
    col_off = ()
    for ks in tl.static_range(KS):
        iw = iw0 + ks * dlw
        col_ok = col_ok + (((iw >= 0) & (iw < W))[:, None] & ch_ok[None, :],)
        col_off = col_off + ((iw * sxw)[:, None] + ch_off[None, :],)
    return col_ok, col_off


def row_items(geom, rows: int, tile_w: int) -> int:
    """Items of ``rows`` output rows x ``tile_w`` output columns of one image (the wgrad
    ``*_rows`` / ``*_taps`` families' reduction steps)."""
    return pixel_grid(geom, rows * tile_w, tile_w)[0]


def row_loads(geom, rows: int) -> int:
    """Input rows a ``*_rows`` program walks for ``rows`` output rows, times the filter's
    columns: each is an unrolled load."""
    return ((rows - 1) * geom.stride[1] + (geom.r - 1) * geom.dilation[1] + 1) * geom.s


def rows_limit(geom, rows: int, max_loads: int) -> str | None:
    """Why a program of ``rows`` output rows (``*_rows``, ``depthwise_span``) unrolls too many
    input-row loads (None when it does not)."""
    if row_loads(geom, rows) > max_loads:
        return (f"{rows} output rows walk {row_loads(geom, rows)} input-row loads, more "
                f"than the {max_loads} unrolled")
    return None


def pixel_block_fits(geom, cfg, min_w: int, min_rows: int) -> str | None:
    """Why a TILE_H x TILE_W pixel block (TILE_H = BLOCK_M // TILE_W) is too large for the
    output map (None when it fits): each side at most the map's, rounded up to a power
    of two, or the floor."""
    _, oh, ow = geom.out_spatial
    tw = cfg["TILE_W"]
    th = cfg["BLOCK_M"] // tw
    if tw > max(min_w, next_pow2(ow)):
        return f"TILE_W={tw} exceeds the {ow} output columns"
    if th > max(min_rows, next_pow2(oh)):
        return f"a {th}-row block exceeds the {oh} output rows"
    return None
