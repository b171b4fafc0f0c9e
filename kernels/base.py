"""What every kernel family declares: a config space, a feasibility rule, a launcher."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import torch

from .device import DeviceSpec
from .geometry import DTYPES, ConvGeometry

# Keys a config may hold. Block sizes are Triton constexprs (TILE_W: width of a 2D
# pixel tile of BLOCK_M pixels; L1_TAPS=1: pipelined input copies that stay in L1,
# see grouped_packed; FILTER_ROWS: filter rows a wgrad_grouped_taps program reduces;
# ITEMS: pixel tiles a grouped_flat program walks; WGMMA=1: its taps as warpgroup mmas
# reading both operands from shared memory); the last two are launch options.
CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "TILE_W", "L1_TAPS",
               "FILTER_ROWS", "ITEMS", "WGMMA", "TMA", "num_warps", "num_stages")

ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}


class Config(Mapping):
    """An immutable, hashable kernel config with a canonical text form."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping | None = None, **kw: int) -> None:
        d = dict(items or {}, **kw)
        for k, v in d.items():
            if k not in CONFIG_KEYS:
                raise ValueError(f"unknown config key {k!r}; known: {CONFIG_KEYS}")
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"config value {k}={v!r} must be a positive int")
        self._items = tuple(sorted(d.items()))

    def __getitem__(self, key: str) -> int:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __str__(self) -> str:
        return ";".join(f"{k}={v}" for k, v in self._items)

    __repr__ = __str__

    @classmethod
    def parse(cls, text: str) -> Config:
        """Inverse of ``str(config)``: ``'BLOCK_K=32;BLOCK_M=64'``."""
        items = {}
        for part in str(text).split(";"):
            part = part.strip()
            if not part:
                continue
            key, sep, val = part.partition("=")
            if not sep or not val.strip().isdigit():
                raise ValueError(f"malformed config item {part!r} in {text!r}")
            items[key.strip()] = int(val)
        return cls(items)

    def get(self, key: str, default: int | None = None) -> int | None:  # type: ignore[override]
        return dict(self._items).get(key, default)


@dataclass(frozen=True)
class Candidate:
    """One launchable choice: a family and one config from its space."""

    family: str
    config: Config

    @property
    def id(self) -> str:
        return f"{self.family}:{self.config}"

    @classmethod
    def parse(cls, text: str) -> Candidate:
        family, sep, cfg = str(text).partition(":")
        if not sep:
            raise ValueError(f"malformed candidate {text!r}: expected 'family:config'")
        return cls(family, Config.parse(cfg))


@dataclass
class ConvCall:
    """Validated tensors of one call, viewed as 5D (N, C, D, H, W) for every family."""

    x: torch.Tensor
    w: torch.Tensor
    out: torch.Tensor
    bias: torch.Tensor | None
    residual: torch.Tensor | None
    geom: ConvGeometry
    activation: int = 0
    allow_tf32: bool = True
    # dgrad through a forward kernel (kernels/dgrad_forward.py): ``w`` is the stored
    # filter and this call's output channels are its input channels (``transposed_w``),
    # its taps read in reverse order (``flip_taps``). The dense GEMM launchers
    # (implicit_gemm, splitk, pointwise, pointwise_tma) and the grouped ones
    # (grouped_packed, grouped_rows, grouped_flat) take such calls, and the depthwise ones
    # (depthwise, depthwise_span) take flip_taps, for which the channel swap is the
    # identity.
    transposed_w: bool = False
    flip_taps: bool = False


@dataclass
class GradCall:
    """Validated tensors of one backward call, 5D (N, C, D, H, W) views.

    ``dy`` is the gradient of the conv output (before the epilogue's own gradients,
    which the autograd function applies). dgrad reads ``dy`` and ``w`` and writes
    ``out`` = dX; wgrad reads ``dy`` and ``x`` and writes ``out`` = dW.
    """

    dy: torch.Tensor
    x: torch.Tensor | None
    w: torch.Tensor | None
    out: torch.Tensor
    geom: ConvGeometry
    allow_tf32: bool = True


# "backward": dX and dW of one backward pass in one kernel (kernels/backward_grouped_flat.py).
DIRECTIONS = ("forward", "dgrad", "wgrad", "backward")


class KernelFamily:
    """A Triton kernel with its declared config space and feasibility rule.

    Subclasses set ``name``, ``summary`` and ``configs`` and implement
    ``supports`` (geometry-level rule), ``config_ok`` (per-config rule) and
    ``launch``. Both rules return ``None`` when fine, else the reason.
    """

    name: str = ""
    summary: str = ""
    configs: tuple[Config, ...] = ()
    # What the family computes (one of DIRECTIONS) and for which geometry dtypes.
    direction: str = "forward"
    dtypes: tuple[str, ...] = DTYPES
    # Offer the smallest runnable tile when pruning leaves nothing (False for families
    # that are an optimisation on top of another one, like split-K).
    always_offer: bool = True
    # Whether the Triton interpreter runs the kernel (a Gluon kernel: no; the CPU tests
    # then compile it for the GPU instead).
    interpreted: bool = True
    # Whether the kernel's offsets are 32-bit whatever the tensors' sizes (its rule bounds
    # them by its own problem's tensors; a dgrad twin also writes through views of all of
    # dX, which it must bound too).
    int32_offsets: bool = False
    # Whether one launch sizes its grid to fill the GPU by itself (its programs walk many
    # items): two such kernels at once on side streams ran slower than one after the other
    # (the flat-grid families' dgrad and wgrad, calls 162 and 170), so ``autograd`` runs
    # such a pair in order.
    fills_gpu: bool = False
    # Whether, when ``autograd`` runs dX and dW at once, this family's kernels are launched
    # before the other direction's, so that its programs take the SMs first and the other's
    # fill what is left. Set for the wgrad families measured faster so (call 195: 0.71-0.95x
    # on ResNeXt-50's strided grouped layers and every MobileNetV2 depthwise layer);
    # ``wgrad_staged_tma`` measured slower (1.05-1.28x) and keeps dX first.
    overlap_first: bool = False

    def launched_first(self, geom: ConvGeometry) -> bool:
        """Whether ``autograd`` launches this family's kernels first on ``geom`` when dX
        and dW run at once (``overlap_first`` unless a family narrows it)."""
        return self.overlap_first

    def pixel_tiles(self, geom: ConvGeometry, cfg: Config) -> int:
        """Programs a launch of ``cfg`` runs over the output pixels of ``geom``: BLOCK_M
        pixels a program (a TILE_W-wide block where the config has one)."""
        from .common import pixel_grid  # common imports this module

        return pixel_grid(geom, cfg["BLOCK_M"], cfg.get("TILE_W", 0))[0]

    @property
    def dgrad_configs(self) -> tuple[Config, ...]:
        """The configs a dgrad twin (``dgrad_forward.ForwardDgradFamily``) runs this
        family's kernel with: all of them unless a family says otherwise."""
        return self.configs

    def supports(self, geom: ConvGeometry) -> str | None:
        raise NotImplementedError

    def rejects(self, geom: ConvGeometry) -> str | None:
        """Geometry-level reason the family cannot run at all: dtype, then ``supports``."""
        if geom.dtype not in self.dtypes:
            return f"{self.name} has no {geom.dtype} kernel"
        return self.supports(geom)

    def config_ok(self, geom: ConvGeometry, cfg: Config, device: DeviceSpec) -> str | None:
        """Per-config rule: the hard limits plus pruning of tiles not worth trying."""
        return self.hard_ok(geom, cfg, device)

    def hard_ok(self, geom: ConvGeometry, cfg: Config, device: DeviceSpec) -> str | None:
        """Limits a launch cannot break (shared memory); forced candidates need only these."""
        if not self.interpreted and device.key == "interpreter":
            return f"{self.name} is a Gluon kernel: the Triton interpreter cannot run it"
        return smem_check(self.smem_bytes(geom, cfg), device)

    def smem_bytes(self, geom: ConvGeometry, cfg: Config) -> int:
        """Shared memory the pipelined operand tiles need (an estimate)."""
        return 0

    def schedule(self, geom: ConvGeometry, cfg: Config) -> str | None:
        """What a launch of ``cfg`` on ``geom`` runs that its knobs do not name (a rule's
        choice of schedule, for ``explain()``), or None."""
        return None

    def feasible(self, geom: ConvGeometry, cfg: Config, device: DeviceSpec) -> str | None:
        return self.rejects(geom) or self.config_ok(geom, cfg, device)

    def runnable(self, geom: ConvGeometry, cfg: Config, device: DeviceSpec) -> str | None:
        return self.rejects(geom) or self.hard_ok(geom, cfg, device)

    def candidates(self, geom: ConvGeometry, device: DeviceSpec) -> list[Candidate]:
        """Feasible configs; if pruning leaves none, the smallest runnable tile, so that a
        family that supports a geometry always offers something."""
        if self.rejects(geom) is not None:
            return []
        ok = [c for c in self.configs if self.config_ok(geom, c, device) is None]
        if not ok and self.always_offer:
            hard = [c for c in self.configs if self.hard_ok(geom, c, device) is None]
            ok = sorted(hard, key=lambda c: (c.get("BLOCK_M", 1) * c.get("BLOCK_N", 1)
                                             * c.get("BLOCK_K", 1), str(c)))[:1]
        return [Candidate(self.name, c) for c in ok]

    def launch(self, call: ConvCall | GradCall, cfg: Config) -> None:
        raise NotImplementedError


def smem_check(need: int, device: DeviceSpec) -> str | None:
    if device.smem_bytes and need > device.smem_bytes:
        return f"needs {need} B of shared memory, {device.name} has {device.smem_bytes}"
    return None


def next_pow2(x: int) -> int:
    return 1 << max(0, (int(x) - 1).bit_length())


def prev_pow2(x: int) -> int:
    """Largest power of two at most ``x`` (1 for x < 2)."""
    return 1 << max(0, int(x).bit_length() - 1)


def tile_fits(block: int, extent: int, floor: int = 16) -> bool:
    """A tile is worth trying when it is at most twice the (rounded) extent."""
    return block <= max(floor, next_pow2(extent))


def channel_tile_too_wide(geom, block_n: int, floor: int = 16) -> str | None:
    """Why a BLOCK_N tile of output channels is not worth trying (``tile_fits``), or None."""
    if tile_fits(block_n, geom.k, floor):
        return None
    return f"BLOCK_N={block_n} exceeds the {geom.k} output channels"
