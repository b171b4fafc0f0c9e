"""What the two Gluon grouped wgrad kernels (``wgrad_grouped_halo``, ``wgrad_grouped_flat``)
share: a pack's channels and its split's items, and the store of every tap's accumulator
(block-diagonal part only) into dW or the split's workspace slice."""

from __future__ import annotations

from .gluon_common import HAVE_GLUON

if HAVE_GLUON:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

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
