"""The sidecar JSON of a sweep CSV: which GPU, software and harness produced it."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import shutil
import socket
import subprocess
from pathlib import Path

FORMAT = "convdispatch-sweep-meta/1"

# Fields that must agree between the runs (resume) or shards (merge) of one data set.
MATCH_FIELDS = (("gpu", "name"), ("software", "torch"), ("software", "triton"), ("harness",))

SMI_FIELDS = ("driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
              "temperature.gpu", "power.limit")


def sidecar_path(csv_path: str | os.PathLike) -> Path:
    """out.csv -> out.meta.json (next to the CSV)."""
    p = Path(csv_path)
    stem = p.name[:-4] if p.name.endswith(".csv") else p.name
    return p.with_name(stem + ".meta.json")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def software_versions() -> dict:
    """Versions read from package metadata (no import of torch needed)."""
    return {"python": platform.python_version(), "torch": package_version("torch"),
            "triton": package_version("triton"), "pandas": package_version("pandas")}


def nvidia_smi(gpu: str | None = None) -> dict | None:
    """Driver, clocks, temperature and power limit as nvidia-smi reports them; None if absent.

    Only reads: the harness never sets clocks.
    """
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    cmd = [exe, f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    if gpu is not None:
        cmd += ["-i", str(gpu)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    values = [v.strip() for v in lines[0].split(",")]
    if len(values) != len(SMI_FIELDS):
        return None
    return {k: (None if v.startswith("[") else v) for k, v in zip(SMI_FIELDS, values)}


def host() -> str:
    return socket.gethostname()


def read_sidecar(path: str | os.PathLike) -> dict:
    p = Path(path)
    try:
        meta = json.loads(p.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"sidecar {p} not found") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"sidecar {p} is not valid JSON: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"sidecar {p} is not a {FORMAT} file")
    return meta


def write_sidecar(path: str | os.PathLike, meta: dict) -> None:
    """Write atomically (temp file + rename): a crash never leaves half a sidecar."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=2, sort_keys=False, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)


def _get(meta: dict, path: tuple[str, ...]):
    v = meta
    for key in path:
        v = v.get(key) if isinstance(v, dict) else None
    return v


def mismatches(a: dict, b: dict, fields=MATCH_FIELDS) -> list[str]:
    """Human-readable differences of the fields that must agree."""
    out = []
    for path in fields:
        va, vb = _get(a, path), _get(b, path)
        if va != vb:
            if isinstance(va, dict) and isinstance(vb, dict):
                keys = sorted(set(va) | set(vb))
                diff = {k: (va.get(k), vb.get(k)) for k in keys if va.get(k) != vb.get(k)}
                out.append(f"{'.'.join(path)} differs: {diff}")
            else:
                out.append(f"{'.'.join(path)}: {va!r} != {vb!r}")
    return out
