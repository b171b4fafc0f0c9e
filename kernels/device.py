"""Facts about a target GPU that kernel feasibility and features depend on."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceSpec:
    """A GPU as the dispatcher sees it. ``key`` names its model directory."""

    key: str
    name: str
    sm_count: int
    smem_bytes: int  # opt-in shared memory per block
    capability: tuple[int, int]
    l2_bytes: int = 0

    @property
    def is_hopper(self) -> bool:
        return self.capability[0] == 9

    @property
    def has_tma(self) -> bool:
        """Tensor-memory-accelerator copies: compute capability 9.0 and newer, and the
        interpreter (which emulates tensor descriptors)."""
        return self.capability == (0, 0) or self.capability[0] >= 9


# Known GPUs; a device that is not listed is described from its properties.
KNOWN = {
    "h100": DeviceSpec("h100", "NVIDIA H100 80GB HBM3", 132, 232448, (9, 0), 50 << 20),
    "h200": DeviceSpec("h200", "NVIDIA H200", 132, 232448, (9, 0), 60 << 20),
    "a100": DeviceSpec("a100", "NVIDIA A100-SXM4-80GB", 108, 166912, (8, 0), 40 << 20),
    "l40s": DeviceSpec("l40s", "NVIDIA L40S", 142, 101376, (8, 9), 96 << 20),
}

# Under TRITON_INTERPRET=1 kernels run on the CPU: no shared-memory limit.
INTERPRETER = DeviceSpec("interpreter", "Triton interpreter (CPU)", 4, 0, (0, 0))


def interpreter_enabled() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def device_key(name: str) -> str:
    """Short key of a GPU name: 'NVIDIA H100 80GB HBM3' -> 'h100'."""
    low = name.lower()
    for key in KNOWN:
        if re.search(rf"\b{key}\b", low):
            return key
    return re.sub(r"[^a-z0-9]+", "_", low.replace("nvidia", "")).strip("_") or "unknown"


def lookup(name: str) -> DeviceSpec:
    """DeviceSpec for a GPU name or key ('h100', 'NVIDIA H100 80GB HBM3')."""
    if name in ("interpreter", "cpu"):
        return INTERPRETER
    key = device_key(name)
    if key not in KNOWN:
        raise ValueError(f"unknown GPU {name!r}; known: {sorted(KNOWN)} (or pass a torch device)")
    return KNOWN[key]


_CACHE: dict = {}


def spec_of(device) -> DeviceSpec:
    """DeviceSpec of a torch device (CUDA) or the interpreter for CPU tensors."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return INTERPRETER
    idx = device.index if device.index is not None else torch.cuda.current_device()
    if idx not in _CACHE:
        p = torch.cuda.get_device_properties(idx)
        key = device_key(p.name)
        smem = getattr(p, "shared_memory_per_block_optin", 0) or KNOWN.get(
            key, KNOWN["a100"]).smem_bytes
        _CACHE[idx] = DeviceSpec(key, p.name, p.multi_processor_count, int(smem),
                                 (p.major, p.minor), int(getattr(p, "L2_cache_size", 0)))
    return _CACHE[idx]
