"""Choosers rank the feasible candidates of a geometry; the top one is launched.

A chooser never times anything: the same geometry gives the same choice in
every process. ``RuleChooser`` is an analytic estimate that needs no data;
``ModelChooser`` (heuristics/) replaces it where a trained model fits the GPU.
"""

from __future__ import annotations

import math
from typing import Protocol

from ..kernels.base import Candidate, Config
from ..kernels.depthwise_span import span_grid
from ..kernels.device import DeviceSpec
from ..kernels.geometry import ConvGeometry
from ..kernels.grad_common import grad_estimate_us
from . import registry
from .decision import Decision


class Chooser(Protocol):
    name: str
    identity: str

    def choose(self, geom: ConvGeometry, cands: list[Candidate], device: DeviceSpec) -> Decision:
        ...


# Narrowest output rows for which wgrad_implicit_gemm_tma goes first: its reduction steps
# are runs of one row, and on rows of 14 or 7 pixels its 16-pixel steps lose to
# wgrad_gemm (0.39-0.87x on ResNet-50's layer3/4 3x3s); on rows of 28 and 56 it is
# 0.99-1.59x, faster on 7 of 8 (validation/results/implicit_gemm_tma_h100/).
ROW_BOX_MIN_W = 28
# Channels a group (the larger of in and out) for which wgrad_grouped_taps goes first: its
# best config beat the other families' on 11 of the 17 swept problems with 4 to 8 (1.10x
# geomean; it loses at batch 1), and on 2 of the 20 outside (calls 57 and 59,
# validation/results/depthwise_wgrad_rows_h100/calls_eval.md).
GROUPED_TAPS_CHANNELS = (4, 8)
# Channels a group up to which wgrad_grouped_halo (Gluon, GPUs only) goes first: its best
# config beat the other families' on 26 of 32 swept grouped problems (1.18x geomean) and
# lost on 6 of the 8 with 32 channels a group, all of its losses (call 142,
# validation/results/grouped_halo_h100/family_gain.md).
GROUPED_HALO_CHANNELS = 16
# Elements of dY from which wgrad_depthwise_span goes before wgrad_depthwise_rows, in 16-bit
# dtypes (the only ones swept): from 2^18 its best config beat the other families' on 33
# of 37 swept float16 depthwise problems and lost by at most 4% on the other 4; below, it
# lost on 12 of 13 (0.57-0.99x: few items to walk; calls 147-148,
# validation/results/depthwise_wgrad_span_h100/span_threshold.md).
SPAN_WGRAD_MIN_DY = 1 << 18


def grad_families(geom: ConvGeometry, direction: str,
                  device: DeviceSpec | None = None) -> tuple[list[str], str]:
    """Family order of a gradient direction. dgrad with a forward equivalent (stride 1, a
    1x1 filter without padding, or a large strided grouped layer by stride phases,
    ``phases_pay``): the forward rule's order on that forward conv (the phase with the
    most taps), run by the ``dgrad_<forward family>`` twins; then, and
    otherwise, FMA for thin groups, else the GEMM."""
    from ..kernels.dgrad_forward import forward_problem, phase_problems
    from ..kernels.grad_packed import MAX_PACKED_CHANNELS
    from ..kernels.stem import MAX_C as STEM_MAX_C

    direct, gemm, packed = (f"{direction}_{v}" for v in ("direct", "gemm", "packed"))
    if direction == "wgrad" and geom.g > 1 and geom.cg == 1:
        # Runs of output rows with an accumulator a tap first: its best config beat the
        # other families' on 37 of 55 swept depthwise problems, 1.28x geomean (calls 53,
        # 55 and 59, validation/results/depthwise_wgrad_rows_h100/); then every tap of a
        # pixel block in one program (filters of more than 27 taps).
        native, why = (["wgrad_depthwise_rows", "wgrad_depthwise_taps", direct, packed, gemm],
                       "depthwise: wgrad by FMA over runs of output rows, an accumulator a "
                       "tap")
        if (geom.elem_bytes == 2 and geom.gemm_m * geom.k >= SPAN_WGRAD_MIN_DY
                and registry.family("wgrad_depthwise_span").rejects(geom) is None):
            native, why = (["wgrad_depthwise_span", *native],
                           "depthwise: wgrad by FMA over fixed spans of dY's (column, channel) "
                           "row; else " + why)
    elif geom.g > 1 and geom.cg == 1:
        native, why = [direct, packed, gemm], f"depthwise: {direction} by FMA"
    elif geom.g == 1 and geom.c <= STEM_MAX_C:
        native, why = ([f"{direction}_stem", gemm, packed, direct],
                       f"{geom.c} input channels: {direction} over the flattened filter "
                       "columns")
    elif (direction == "wgrad" and geom.g > 1
          and GROUPED_TAPS_CHANNELS[0] <= max(geom.cg, geom.kg) <= GROUPED_TAPS_CHANNELS[1]):
        native, why = (["wgrad_grouped_taps", packed, gemm, direct],
                       f"{geom.cg} channels a group: wgrad with groups packed in an MMA tile, "
                       "a filter row's taps in one program")
    elif geom.g > 1 and max(geom.cg, geom.kg) <= MAX_PACKED_CHANNELS:
        native, why = ([packed, gemm, direct],
                       f"{geom.cg} channels a group: {direction} with groups packed in MMA "
                       "tiles")
    else:
        native, why = [gemm, packed, direct], f"{direction} as an implicit GEMM"
    if (direction == "wgrad" and geom.g > 1 and max(geom.cg, geom.kg) <= GROUPED_HALO_CHANNELS
            and registry.family("wgrad_grouped_halo").rejects(geom) is None):
        # First where the GPU runs it; where it does not (the interpreter, no config
        # fits), the order it would have had without it.
        native, why = (["wgrad_grouped_halo", *native],
                       "wgrad from input rows copied once into shared memory; else " + why)
    if (direction == "wgrad" and device is not None and device.has_tma
            and registry.family("wgrad_pointwise_tma").rejects(geom) is None):
        return (["wgrad_pointwise_tma", *native],
                "1x1 stride 1 channels_last on Hopper: dY^T X with TMA tiles")
    if (direction == "wgrad" and device is not None and device.has_tma
            and geom.out_spatial[2] >= ROW_BOX_MIN_W
            and registry.family("wgrad_implicit_gemm_tma").rejects(geom) is None):
        return (["wgrad_implicit_gemm_tma", *native],
                f"stride 1 channels_last on Hopper, rows of {ROW_BOX_MIN_W}+ pixels: dY^T X "
                "from one-row TMA boxes")
    tg = forward_problem(geom) if direction == "dgrad" and device is not None else None
    how = "the forward conv of dY"
    if tg is None and direction == "dgrad" and device is not None and phases_pay(geom):
        tg = max((p.geom for p in phase_problems(geom) if p.geom is not None),
                 key=lambda g: g.t * g.r * g.s)
        how = "forward convs of dY, one a stride phase"
    if tg is not None and native[0] != "dgrad_stem":
        order, fwd_why = preferred_families(tg, device)
        twins = [f"dgrad_{f}" for f in order if registry.known(f"dgrad_{f}")
                 and registry.family(f"dgrad_{f}").rejects(geom) is None]
        if twins:
            return twins + native, f"dgrad as {how} ({fwd_why})"
    return native, why


# Output pixels from which a grouped or depthwise strided dgrad goes to the stride phases
# first (four stride-1 launches cost more than they save on small layers): on the
# gradient sweep's strided problems (call 73, validation/results/dgrad_phases_h100/), the
# phases' best config against the strided kernels' best: grouped 2.45x on the 7 problems
# of 4096+ pixels (all faster), 0.61x on the 6 below; depthwise 1.35x (9 of 10 faster),
# 0.58x below. Dense layers were mixed (1.07x, faster on 57%) and stay with dgrad_gemm.
PHASE_DGRAD_MIN_PIXELS = 4096


def phases_pay(geom: ConvGeometry) -> bool:
    """Whether a strided grouped or depthwise dgrad goes to the stride phases first: dX
    splits into phases (``dgrad_forward.phase_problems``) and dY has at least
    PHASE_DGRAD_MIN_PIXELS pixels."""
    from ..kernels.dgrad_forward import phase_problems

    return (geom.g > 1 and phase_problems(geom) is not None
            and geom.n * math.prod(geom.out_spatial) >= PHASE_DGRAD_MIN_PIXELS)


def span_pays(geom: ConvGeometry) -> bool:
    """Where ``depthwise_span`` beat ``depthwise_rows`` on the H100 sweeps (best config of
    each, 112 depthwise problems of the train and holdout plans): 16-bit values, filters
    up to 5x5, more than 2M outputs (spans mostly lost on MobileNetV2's float32 layers and
    up to 2.7x on small layers with 5x5 and 7x7 filters). Picking by this rule: 0.962 of
    the better family's speed (geomean), always rows 0.926, always spans 0.943
    (validation/results/span_family_h100/)."""
    _, oh, ow = geom.out_spatial
    return (geom.elem_bytes == 2 and geom.layout == "channels_last" and geom.r <= 5
            and geom.s <= 5 and geom.n * geom.k * oh * ow > 2_000_000)


# grouped_packed's tile for ResNeXt-style layers large enough to fill the GPU with it.
WIDE_PACKED = Config(BLOCK_M=128, BLOCK_N=32, BLOCK_K=32, num_warps=4, num_stages=4)
WIDE_PACKED_WAVES = 2


def wide_packed_pays(geom: ConvGeometry, device: DeviceSpec) -> bool:
    """Whether ``grouped_packed`` takes WIDE_PACKED ahead of its measured config order: the
    tile's 32 output channels hold whole groups with none idle (K/g divides 32 and the
    group count), and it fills at least two waves of the device's SMs. On the H100 sweeps
    (best config's latency over the chosen one's, geomean within the family) this lifts
    the 80 grouped train problems from 0.902 (measured order alone) to 0.907, the 32
    holdout ones from 0.940 to 0.950 and ResNeXt-50's batch-32 fp16 layers from 0.924 to
    0.99; the wave threshold (0, 2, 4, 8, 16 tried) was picked on the train problems."""
    gpt = WIDE_PACKED["BLOCK_N"] // max(geom.kg, 1)
    if geom.g == 1 or gpt < 1 or geom.g % gpt:
        return False
    programs = math.ceil(geom.gemm_m / WIDE_PACKED["BLOCK_M"]) * (geom.g // gpt)
    return programs >= WIDE_PACKED_WAVES * device.sm_count


# Input channels above which pointwise_tma's 64-channel K box pays: picked on the train
# plan's 232 problems it supports (the rule's efficiency there 0.81 without it; 0.91 for
# any C, 0.93 above 32, 0.91 above 64; validation/results/pointwise_tma_h100/). The
# persistent twin comes second: 1.009x the one-tile kernel's best on the 211 problems the
# rule takes, but faster on only 43% (validation/results/persistent_tma_h100/).
TMA_MIN_C = 32


def tma_pays(geom: ConvGeometry, device: DeviceSpec) -> bool:
    """Whether a 1x1 conv goes to pointwise_tma first: it runs here (Hopper or the
    interpreter, stride 1, channels_last, 16-byte rows) and has more than TMA_MIN_C input
    channels."""
    return (device.has_tma and geom.c > TMA_MIN_C
            and registry.family("pointwise_tma").rejects(geom) is None)


# Narrowest output rows for which implicit_gemm_tma goes first: its pixel tiles are at
# least 8 wide, so 7-wide rows waste a quarter of each tile. On the 114 swept problems it
# runs, its best config against the best of the others: 1.18x (90% wins, min 0.94) on
# the 72 2D problems with enough tiles and rows of 14 or more, 0.87x on the rest
# (validation/results/implicit_gemm_tma_h100/). Its persistent twin goes first: on the
# 101 problems the rule takes, its best config is 1.033x the one-tile kernel's best (faster
# on half); strided layers stay off the rule: there the two box families' best is 0.93x
# the other families' (validation/results/persistent_tma_h100/).
BOX_CONV_MIN_W = 14


def box_conv_pays(geom: ConvGeometry, device: DeviceSpec) -> bool:
    """Whether a dense conv goes to implicit_gemm_tma first: it runs here (Hopper or the
    interpreter, channels_last), stride 1, 2D (3D video layers lose), rows of at least
    BOX_CONV_MIN_W output pixels."""
    return (device.has_tma and geom.dims == 2 and geom.stride == (1, 1, 1)
            and geom.out_spatial[2] >= BOX_CONV_MIN_W
            and registry.family("implicit_gemm_tma").rejects(geom) is None)


def preferred_families(geom: ConvGeometry, device: DeviceSpec,
                       direction: str = "forward") -> tuple[list[str], str]:
    """Family order by the shape of the problem, and the rule that gave it."""
    if direction == "backward":
        from .fused_pair import rule_fuses

        if rule_fuses(geom, device):
            return (["backward_grouped_flat", "backward_pair"],
                    "wgrad picks the flat-grid kernel and the fused kernel fills the SMs: "
                    "dX and dW of one backward pass in one kernel")
        return (["backward_pair", "backward_grouped_flat"],
                "the dgrad and wgrad choices (the fused kernel only where wgrad picks the "
                "flat-grid kernel and its programs fill the SMs)")
    if direction != "forward":
        return grad_families(geom, direction, device)
    if geom.g > 1:
        if geom.cg == 1 and geom.dims == 2:
            if span_pays(geom):
                return (["depthwise_span", "depthwise_rows", "depthwise", "grouped_direct"],
                        "depthwise, 16-bit, channels_last, large: FMA over spans of the "
                        "(column, channel) row, reusing each input row")
            return (["depthwise_rows", "depthwise_span", "depthwise", "grouped_direct"],
                    "depthwise: FMA over output rows that reuse each input row in registers")
        if geom.cg == 1:
            return (["depthwise", "grouped_direct"],
                    "depthwise: FMA over 2D pixel blocks that share their halo in L1")
        if 2 <= geom.cg <= 8 and geom.kg <= 32 and geom.dims == 2 and geom.stride[1] == 1:
            return (["grouped_rows", "grouped_packed", "grouped_gemm", "grouped_direct"],
                    f"{geom.cg} channels a group, stride 1: groups packed into MMA tiles "
                    "that reuse each input row")
        if 2 <= geom.cg <= 32 and geom.kg <= 64:
            return (["grouped_packed", "grouped_rows", "grouped_gemm", "grouped_direct"],
                    f"{geom.cg} channels a group: groups packed into one MMA tile")
        if geom.cg <= 8:
            return ["grouped_direct", "grouped_gemm"], f"{geom.cg} channels a group: direct FMA"
        return ["grouped_gemm", "grouped_direct"], f"{geom.cg} channels a group: grouped GEMM"
    if geom.c <= 8:
        return ["stem", "implicit_gemm"], f"{geom.c} input channels: stem path"
    if geom.is_pointwise:
        if tma_pays(geom, device):
            return (["pointwise_tma", "pointwise_tma_persistent", "pointwise", "splitk",
                     "implicit_gemm"],
                    "1x1 filter, stride 1, channels_last, Hopper: GEMM with TMA tiles")
        return ["pointwise", "splitk", "implicit_gemm"], "1x1 filter: GEMM over channels"
    tiles = math.ceil(geom.gemm_m / 128) * math.ceil(geom.kg / 128)
    if tiles < device.sm_count // 2 and geom.gemm_k >= 1024:
        return (["splitk", "implicit_gemm"],
                f"{tiles} output tiles for {device.sm_count} SMs: split the reduction")
    if box_conv_pays(geom, device):
        return (["implicit_gemm_tma_persistent", "implicit_gemm_tma", "implicit_gemm", "splitk"],
                "stride 1, channels_last, Hopper: implicit GEMM from TMA boxes, persistent")
    return ["implicit_gemm", "splitk"], "dense convolution: implicit GEMM"


def estimate_us(geom: ConvGeometry, cand: Candidate, device: DeviceSpec) -> float:
    """Rough latency from waves of padded tiles; only its ordering matters."""
    cfg = cand.config
    sms = max(device.sm_count, 1)
    family = registry.family(cand.family)
    if family.direction != "forward":
        return grad_estimate_us(family.grid(geom, cfg), cfg.get("SPLIT_K", 1), sms)
    if cand.family == "grouped_direct":
        work = geom.gemm_m * geom.k * geom.gemm_k
        tiles = math.ceil(geom.gemm_m / cfg["BLOCK_M"]) * math.ceil(geom.k / cfg["BLOCK_N"])
        occupancy = min(1.0, tiles / sms)
        return work / (2e6 * max(occupancy, 0.05)) + 3.0
    if cand.family == "depthwise_span":
        programs = span_grid(geom, cfg["BLOCK_M"], cfg["BLOCK_N"])[2]
        waste = programs * cfg["BLOCK_M"] * cfg["BLOCK_N"] / max(geom.gemm_m * geom.k, 1)
        return 3.0 + waste * geom.min_bytes / 2.5e6 / min(1.0, programs / (4 * sms))
    if cand.family == "grouped_packed":
        return packed_estimate_us(geom, cand)
    if cand.family == "grouped_rows":
        return grouped_rows_estimate_us(geom, cand)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg.get("BLOCK_K", 32)
    split = cfg.get("SPLIT_K", 1)
    k_pad = geom.t * geom.r * geom.s * math.ceil(geom.cg / bk) * bk
    if cand.family == "stem":
        k_pad = math.ceil(geom.gemm_k / bk) * bk
    tiles = math.ceil(geom.gemm_m / bm) * math.ceil(geom.kg / bn) * geom.g * split
    waves = math.ceil(tiles / sms)
    # Bigger tiles reuse operands better; very deep pipelines need many iterations.
    efficiency = min(1.0, (bm * bn) / (128 * 128)) ** 0.35
    tile_flops = 2 * bm * bn * k_pad / split
    us = waves * tile_flops / (4e6 * efficiency) + 2.0
    if split > 1:
        us += geom.gemm_m * geom.k * split * 4 / 1.5e6 + 3.0
    return us


def packed_estimate_us(geom: ConvGeometry, cand: Candidate) -> float:
    """Packed grouped tiles are memory bound: on the H100 a 128-pixel, 4-warp, 4-stage
    tile holding two groups' outputs (32 to 64 channels) was best or within 5% on
    ResNeXt-50's layers, so configs rank by their distance from that one."""
    cfg = cand.config
    bn = min(64, max(32, 2 * geom.kg))
    want = {"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": bn, "num_warps": 4, "num_stages": 4,
            "L1_TAPS": None}  # L1_TAPS lost to its 16-byte twin on 83 of 101 H100 problems
    misses = sum(cfg.get(k) != v for k, v in want.items())
    size = abs(math.log2(cfg["BLOCK_M"] * cfg["BLOCK_N"] / (128 * bn)))
    return 10.0 + 5.0 * misses + size


def grouped_rows_estimate_us(geom: ConvGeometry, cand: Candidate) -> float:
    """Ranks grouped_rows configs by their distance from the tile that was best on the
    H100 for ResNeXt-50's stride-1 layers (so the rule's choice there is not a held-out
    result): 16 output channels on 2 warps, as many rows as the map has to spare (8 on
    56x56, 4 on 28x28), 32 columns where the map is at least 24 wide."""
    cfg = cand.config
    _, oh, ow = geom.out_spatial
    want_rows = 8 if oh >= 32 else 4 if oh >= 16 else 2
    want = {"BLOCK_N": 16, "num_warps": 2, "TILE_W": 32 if ow >= 24 else 16}
    misses = sum(cfg.get(k) != v for k, v in want.items())
    rows = cfg["BLOCK_M"] // cfg["TILE_W"]
    return 10.0 + 5.0 * misses + abs(math.log2(rows / want_rows))


class RuleChooser:
    """Family by shape rules; config by the family's measured config order
    (dispatcher/rule_order.json), then by a waves-and-tiles estimate."""

    name = "rule"
    identity = "rule-v2"

    def choose(self, geom: ConvGeometry, cands: list[Candidate], device: DeviceSpec) -> Decision:
        from .registry import direction_of
        from .rule_order import config_order

        if not cands:
            raise RuntimeError(f"no kernel family supports {geom.describe()}")
        order, why = preferred_families(geom, device, direction_of(cands[0]))
        rank_of = {f: i for i, f in enumerate(order)}
        cfg_rank = config_order()

        wide = wide_packed_pays(geom, device)

        def is_wide(cand: Candidate) -> bool:
            return wide and cand.family == "grouped_packed" and cand.config == WIDE_PACKED

        def measured(family: str) -> dict:
            # A dgrad twin of a forward family runs the forward kernel: its config order
            # until the dgrad sweeps give one of its own.
            fwd = getattr(registry.family(family), "forward", None)
            return cfg_rank.get(family) or (cfg_rank.get(fwd.name, {}) if fwd else {})

        # A family with a config rule of its own (``rule_config``): that config first.
        ruled = {f: rule(geom, device) for f in {c.family for c in cands}
                 if (rule := getattr(registry.family(f), "rule_config", None)) is not None}

        def key(cs):
            cand, est = cs
            listed = measured(cand.family).get(str(cand.config), math.inf)
            first = is_wide(cand) or ruled.get(cand.family, False) == cand.config
            return (rank_of.get(cand.family, len(order)), -1 if first else listed, est,
                    cand.id)

        scored = sorted(((c, estimate_us(geom, c, device)) for c in cands), key=key)
        best = scored[0][0]
        how = ("the family's best-ranked config in the measured order"
               if str(best.config) in measured(best.family)
               else "the config with the fewest estimated waves of padded tiles")
        if is_wide(best):
            how = "a 32-channel tile of whole groups that fills two waves of SMs"
        elif best.config == ruled.get(best.family):
            how = "the family's own config rule"
        reason = f"rule: {why}; {how}"
        if best.family != order[0]:
            reason = f"rule: {why}, but {order[0]} has no feasible config; took {best.family}"
        return Decision(best, reason, self.name, tuple(scored))
