"""What the two Gluon grouped wgrad families (``wgrad_grouped_halo``, ``wgrad_grouped_flat``)
share: their packs of whole groups (launch grid, hard rules) and, in the kernels, a pack's
channels and its split's items, and the store of every tap's accumulator (block-diagonal
part only) into dW or the split's workspace slice."""

from __future__ import annotations

from .base import Config
from .common import cdiv
from .gluon_common import HAVE_GLUON, pack_rejects
from .grad_common import GradFamily, GradGrid
from .grad_packed import square_pack_gpt


class GluonWgradFamily(GradFamily):
    """A Gluon grouped wgrad family: packs of GPT whole groups a [BLOCK_N, BLOCK_N] tile
    (block-diagonal), every tap's accumulator in one program, mma warps splitting the
    tile's columns in eights, reduction split in a fixed order."""

    direction = "wgrad"
    dtypes = ("float16", "bfloat16")
    interpreted = False

    @staticmethod
    def gpt(geom, cfg: Config) -> int:
        """Whole groups a BLOCK_N x BLOCK_N tile packs."""
        return square_pack_gpt(geom, cfg["BLOCK_N"])

    def pack_grid(self, geom, cfg: Config, k_steps: int, k_block: int) -> GradGrid:
        """Packs of GPT groups (times the depth taps: a program a plane of taps), each
        reducing every tap of a plane over ``k_steps`` items of ``k_block`` output
        positions."""
        bn, gpt, taps = cfg["BLOCK_N"], self.gpt(geom, cfg), geom.r * geom.s
        return GradGrid(m=gpt * geom.kg, n=gpt * geom.cg * taps, red=geom.gemm_m, block_m=bn,
                        block_n=bn * taps, tiles_m=1, tiles_n=1,
                        mult=cdiv(geom.g, gpt) * geom.t, k_steps=k_steps, k_block=k_block)

    def layout_rejects(self, geom, cfg: Config) -> str | None:
        """Why the family's shared-memory layout cannot hold ``cfg`` on ``geom``."""
        return None

    def hard_ok(self, geom, cfg, device) -> str | None:
        if reason := (pack_rejects(geom, cfg["BLOCK_N"], device, geom.cg, geom.kg)
                      or self.layout_rejects(geom, cfg)):
            return reason
        if cfg["num_warps"] > cfg["BLOCK_N"] // 8:
            return f"num_warps={cfg['num_warps']} exceeds BLOCK_N={cfg['BLOCK_N']} / 8"
        return super().hard_ok(geom, cfg, device)


if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def release_reduction(SPLIT: gl.constexpr, NEXT: gl.constexpr):
        """With a split and NEXT (``dependent``), let the reduction pass, launched as this
        kernel's dependent, be scheduled once every program has started."""
        if SPLIT and NEXT:
            gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [],
                                      dtype=gl.int32, is_pure=False, pack=1)

    @gluon.jit
    def pack_channels(pack, pid_s, CTOT, KTOT, ITEMS, ITEMS_PER_SPLIT, CG: gl.constexpr,
                      KG: gl.constexpr, GPT: gl.constexpr, BLOCK: gl.constexpr,
                      R: gl.constexpr, S: gl.constexpr, L_CH: gl.constexpr,
                      MMA: gl.constexpr):
        """(input channels of pack ``pack`` of GPT groups and their mask, its output
        channels and theirs, in layout L_CH; the items [first, end) split ``pid_s``
        reduces; R*S zero [BLOCK, BLOCK] tap accumulators in the MMA layout)."""
        ch = gl.arange(0, BLOCK, layout=L_CH)
        c_glob = pack * (GPT * CG) + ch
        c_ok = (ch < GPT * CG) & (c_glob < CTOT)
        k_glob = pack * (GPT * KG) + ch
        k_ok = (ch < GPT * KG) & (k_glob < KTOT)
        first = pid_s * ITEMS_PER_SPLIT
        end = gl.minimum(first + ITEMS_PER_SPLIT, ITEMS)
        accs = ()
        for _t in gl.static_range(R * S):
            accs = accs + (gl.zeros([BLOCK, BLOCK], gl.float32, MMA),)
        return c_glob, c_ok, k_glob, k_ok, first, end, accs

    @gluon.jit
    def store_taps(accs, pack, pid_s, dw_ptr, ws_ptr, CTOT, KTOT, WS_STRIDE, swk, swc, swr,
                   sws, CG: gl.constexpr, KG: gl.constexpr, GPT: gl.constexpr,
                   BLOCK: gl.constexpr, R: gl.constexpr, S: gl.constexpr,
                   SPLIT: gl.constexpr, MMA: gl.constexpr):
        """Each tap's [BLOCK, BLOCK] accumulator of a pack of GPT groups (``accs``, in the
        MMA layout), its block-diagonal part only, into dW or the split's float32 slice of
        the workspace [SPLIT_K slices, R*S, K, C/G] (as in wgrad_gemm)."""
        offs_k = gl.arange(0, BLOCK, layout=gl.SliceLayout(1, MMA))
        offs_c = gl.arange(0, BLOCK, layout=gl.SliceLayout(0, MMA))
        k_glob = pack * (GPT * KG) + offs_k
        c_glob = pack * (GPT * CG) + offs_c
        # Output channel k and input channel c of one group.
        mask = (gl.expand_dims((offs_k < GPT * KG) & (k_glob < KTOT), 1)
                & gl.expand_dims((offs_c < GPT * CG) & (c_glob < CTOT), 0)
                & (gl.expand_dims(offs_k // KG, 1) == gl.expand_dims(offs_c // CG, 0)))
        c_loc = offs_c % CG
        for t in gl.static_range(R * S):
            if not SPLIT:
                off = (gl.expand_dims(k_glob * swk, 1) + gl.expand_dims(c_loc * swc, 0)
                       + (t // S) * swr + (t % S) * sws)
                gl.store(dw_ptr + off, accs[t].to(dw_ptr.dtype.element_ty), mask=mask)
            else:
                off = (gl.expand_dims(k_glob * CG, 1)
                       + gl.expand_dims(t * (KTOT * CG) + c_loc, 0))
                gl.store(ws_ptr + pid_s.to(gl.int64) * WS_STRIDE + off, accs[t], mask=mask)
