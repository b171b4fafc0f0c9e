"""Arrival counters: int32 words that are zero when a launch starts and that the launch
leaves zero, for kernels whose last program of a group to finish does the group's final
step (``wgrad_grouped_flat``'s fused split reduction).

Launches on one stream run one after another, so eager launches share one buffer per
stream. A CUDA graph replays its launches with the addresses they were captured with,
and two graphs may replay at once on different streams, so a launch captured in a graph
takes counters of its own: from a pool zeroed outside any capture, or, once the pool is
spent, zeroed inside the graph (a memset node of its own).
"""

from __future__ import annotations

import threading

import torch

# Counters in a device's pool for captured launches (256 KiB).
POOL_WORDS = 1 << 16
_lock = threading.Lock()
_by_stream: dict[tuple[int, int], torch.Tensor] = {}
_pools: dict[int, list] = {}  # device index -> [pool, words handed out]


def arrival_counters(device, n: int) -> torch.Tensor:
    """``n`` int32 counters on CUDA ``device``, zero now and for the next launch on the
    current stream, which must leave them zero."""
    if n < 1:
        raise ValueError(f"arrival counters: asked for {n}, need at least one")
    device = torch.device(device)
    if device.type != "cuda":
        raise RuntimeError(f"arrival counters live on a CUDA device, not {device}")
    idx = device.index if device.index is not None else torch.cuda.current_device()
    with _lock:
        if torch.cuda.is_current_stream_capturing():
            pool = _pools.get(idx)
            if pool is not None and pool[1] + n <= pool[0].numel():
                pool[1] += n
                return pool[0][pool[1] - n:pool[1]]
            return torch.zeros(n, dtype=torch.int32, device=device)
        if idx not in _pools:
            _pools[idx] = [torch.zeros(POOL_WORDS, dtype=torch.int32, device=device), 0]
        key = (idx, torch.cuda.current_stream(device).cuda_stream)
        buf = _by_stream.get(key)
        if buf is None or buf.numel() < n:
            # The buffer replaced, if any, is freed to this stream: later work on it only.
            buf = _by_stream[key] = torch.zeros(max(n, 1024), dtype=torch.int32,
                                                device=device)
        return buf[:n]
