"""Shared test utilities: fresh random tensors, float64 references, relative error."""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from convdispatch.dispatcher import run_candidate
from convdispatch.kernels.base import Candidate
from convdispatch.kernels.geometry import ConvGeometry

# float32 follows torch.backends.cudnn.allow_tf32 (on by default), hence tf32-level error.
TOL = {"float32": 2e-3, "float16": 5e-3, "bfloat16": 3e-2}


def tensors_for(geom: ConvGeometry, seed: int = 0, bias: bool = True):
    """Random input, weight, bias in the geometry's dtype and layout (never zeros)."""
    gen = torch.Generator().manual_seed(seed)
    dt = getattr(torch, geom.dtype)
    sp = (geom.d, geom.h, geom.w)[3 - geom.dims:]
    fl = (geom.t, geom.r, geom.s)[3 - geom.dims:]
    x = torch.randn(geom.n, geom.c, *sp, generator=gen).to(dt)
    w = (torch.randn(geom.k, geom.cg, *fl, generator=gen) / geom.gemm_k ** 0.5).to(dt)
    b = torch.randn(geom.k, generator=gen).to(dt) if bias else None
    if geom.layout == "channels_last":
        fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
        x = x.to(memory_format=fmt)
        w = w.to(memory_format=fmt)
    return x, w, b


def conv_kwargs(geom: ConvGeometry) -> dict:
    lead = 3 - geom.dims
    return dict(stride=geom.stride[lead:], padding=geom.pad[lead:],
                dilation=geom.dilation[lead:], groups=geom.g)


def reference(geom: ConvGeometry, x, w, b=None, residual=None, activation=None):
    """float64 torch result of act(conv + bias + residual); asymmetric padding (pad_hi)
    is applied to the input first, since torch pads both sides alike."""
    if geom.pad_hi is not None:
        lead = 3 - geom.dims
        pads = [p for lo, hi in zip(geom.pad[lead:], geom.pads_hi[lead:]) for p in (lo, hi)]
        x = F.pad(x.double(), [p for dim in reversed(range(geom.dims))
                               for p in pads[2 * dim:2 * dim + 2]])
        geom = dataclasses.replace(geom, pad=(0, 0, 0), pad_hi=None, h=x.shape[-2],
                                   w=x.shape[-1], d=x.shape[-3] if geom.dims == 3 else 1)
    fn = F.conv2d if geom.dims == 2 else F.conv3d
    y = fn(x.double(), w.double(), None if b is None else b.double(), **conv_kwargs(geom))
    if residual is not None:
        y = y + residual.double()
    acts = {None: lambda t: t, "relu": F.relu, "relu6": F.relu6, "gelu": F.gelu,
            "silu": F.silu}
    return acts[activation](y)


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    out = out.double()
    if not torch.isfinite(out).all():
        return float("inf")
    return float((out - ref).norm() / ref.norm().clamp_min(1e-300))


def poisoned_out(geom: ConvGeometry, like: torch.Tensor) -> torch.Tensor:
    """An output buffer full of NaN in the geometry's layout: unwritten elements show."""
    shape = [geom.n, geom.k, *geom.out_spatial[3 - geom.dims:]]
    out = torch.full(shape, float("nan"), dtype=like.dtype)
    if geom.layout == "channels_last":
        fmt = torch.channels_last if geom.dims == 2 else torch.channels_last_3d
        out = out.to(memory_format=fmt)
    return out


@dataclass(frozen=True)
class SweepProblem:
    """What the sweep harness reads of a problem (data.problems.Problem without checks,
    so tests can hand it malformed values)."""

    id: str
    set: str
    layer: str
    geom: ConvGeometry


def conv_call(geom: ConvGeometry, **kw):
    """A forward ConvCall on fresh tensors of ``geom`` (no bias), as ``launch`` builds one."""
    from convdispatch.dispatcher.launch import as5d
    from convdispatch.kernels.base import ConvCall

    x, w, _ = tensors_for(geom, bias=False)
    out = poisoned_out(geom, x)
    return ConvCall(x=as5d(x, geom.dims), w=as5d(w, geom.dims), out=as5d(out, geom.dims),
                    bias=None, residual=None, geom=geom, **kw)


def launch_filter_vector(call) -> int:
    """``filter_vector`` of ``call`` at the filter strides its launch passes."""
    from convdispatch.kernels.common import oriented_filter
    from convdispatch.kernels.grouped_packed import filter_vector

    return filter_vector(call, oriented_filter(call)[1])


def check_candidate(family: str, geom: ConvGeometry, config, *, activation=None,
                    with_residual=False, bias=True, seed=0, x=None, tol=None) -> None:
    """Run one config of a family into a poisoned output (bias, optional residual and
    activation) and compare with the float64 reference by relative norm."""
    xs, w, b = tensors_for(geom, seed=seed, bias=bias)
    x = xs if x is None else x
    res = poisoned_out(geom, x).normal_() if with_residual else None
    out = poisoned_out(geom, x)
    run_candidate(Candidate(family, config), x, w, b, geom, out=out, activation=activation,
                  residual=res)
    err = rel_err(out, reference(geom, x, w, b, res, activation))
    assert err < (tol or TOL[geom.dtype]), f"{config} on {geom.describe()}: rel err {err:.2e}"


def check_candidates_on_gpu(cands: list[Candidate], geom: ConvGeometry, tol: float,
                            x_ok=None) -> None:
    """Each candidate on the GPU into a poisoned output, bias and a channels_last residual
    with ReLU on, against torch in float32 by relative norm; ``x_ok(x)`` checks the input
    first."""
    x, w, b = (t.cuda() for t in tensors_for(geom, bias=True))
    res = poisoned_out(geom, x).cuda().normal_()
    if x_ok is not None:
        assert x_ok(x)
    conv = F.conv2d if geom.dims == 2 else F.conv3d
    ref = torch.relu(conv(x.float(), w.float(), b.float(), **conv_kwargs(geom)) + res.float())
    for cand in cands:
        out = poisoned_out(geom, x).cuda()
        run_candidate(cand, x, w, b, geom, out=out, activation="relu", residual=res)
        err = float((out.float() - ref).norm() / ref.norm())
        assert err < tol, f"{cand.id} on {geom.describe()}: rel err {err:.2e}"


_SM90_COMPILE = """
import json, re, sys
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import importlib
k = getattr(importlib.import_module(sys.argv[1]), sys.argv[2])
const, box, opts = json.loads(sys.argv[3]), json.loads(sys.argv[4]), json.loads(sys.argv[5])
divisible = opts.pop("divisible")
const = {a: getattr(tl, v[3:]) if isinstance(v, str) and v.startswith("tl.") else v
         for a, v in const.items()}
sig = {n: "constexpr" if n in const else
       "tensordesc<fp16[" + ", ".join(map(str, box[n])) + "]>" if n in box else
       "*fp16" if n.endswith("_ptr") else "i32" for n in k.arg_names}
attrs = {(k.arg_names.index(n),): [["tt.divisibility", 16]] for n in k.arg_names
         if n not in const and n not in box and (n.endswith("_ptr") or n in divisible)}
src = ASTSource(k, sig, constexprs={(k.arg_names.index(a),): v for a, v in const.items()},
                attrs=attrs)
compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
asm = compiled.asm
dots = re.findall(r"ttng[.]warp_group_dot %[^:]*: ([^*]*)[*] ([^-]*)->", asm["ttgir"])
memory = re.findall(r"\\b(ld[.]global|st[.]global|griddepcontrol[.][a-z_]+)", asm["ptx"])
print(json.dumps({
    "tma": sorted({r + "d." + d for r, d in
                   re.findall(r"cp[.]async[.]bulk[.]tensor[.](\\d)d[.]([a-z]+)", asm["ptx"])}),
    "wgmma": "wgmma" in asm["ptx"],
    "smem_operands": bool(dots) and all("memdesc" in a and "memdesc" in b for a, b in dots),
    "cp_async": "cp.async.cg" in asm["ptx"] or "cp.async.ca" in asm["ptx"],
    "global_memory_order": memory,
    "integer_divisions": len(re.findall(r"\\b(?:div|rem)[.][su](?:32|64)\\b", asm["ptx"])),
    "shared_bytes": compiled.metadata.shared,
}))
"""


def compile_for_sm90(module: str, kernel: str, constexprs: dict, boxes: dict) -> dict:
    """What ``sm90_compile`` reports of the TMA kernels: 'tma', 'wgmma', 'smem_operands'."""
    got = sm90_compile(module, kernel, constexprs, boxes)
    return {key: got[key] for key in ("tma", "wgmma", "smem_operands")}


def sm90_compile(module: str, kernel: str, constexprs: dict, boxes: dict,
                 num_warps: int = 8, num_stages: int = 3,
                 divisible: tuple[str, ...] = ()) -> dict:
    """Compile a kernel for sm_90 in a process without the interpreter (no GPU needed):
    the TMA copies in its PTX as 'RANKd.DIRECTION' ('shared': global->shared loads,
    'global': shared->global stores), whether it issues wgmma, whether every wgmma
    reads both operands from shared memory (not through registers), whether it issues
    cp.async copies, its global loads and stores in program order ('ld.global' /
    'st.global', with any 'griddepcontrol.wait' / '.launch_dependents'), its integer
    divisions and remainders by run-time values, and the shared memory it allocates.
    ``boxes`` gives the fp16 block shape of each tensor-descriptor argument; a constexpr
    written "tl.float32" is that dtype. Pointers, and the integers named in
    ``divisible``, are taken as multiples of 16, as a launch on aligned tensors
    specializes them."""
    import json

    opts = {"num_warps": num_warps, "num_stages": num_stages, "divisible": list(divisible)}
    return json.loads(run_without_interpreter(_SM90_COMPILE, module, kernel,
                                              json.dumps(constexprs), json.dumps(boxes),
                                              json.dumps(opts)))


def run_without_interpreter(code: str, *args: str, timeout: float = 300) -> str:
    """stdout of ``python -c code args...`` in a fresh process without TRITON_INTERPRET:
    sm_90 compiles there see no state an interpreted kernel of this process left behind
    (Triton 3.6's interpreter leaves triton.language.core patched)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def gluon_geom(**kw) -> ConvGeometry:
    """A ConvGeometry as the Gluon families take it: float16 and channels_last unless
    ``kw`` says otherwise."""
    kw.setdefault("dtype", "float16")
    kw.setdefault("layout", "channels_last")
    return ConvGeometry(**kw)


# Grouped geometries every Gluon grouped family refuses (gluon_common.gluon_grouped_rejects),
# each with a word of the reason. (An ungrouped one each family words its own way.)
GLUON_RULE_CASES = [
    (gluon_geom(n=1, c=256, k=256, g=4, h=8, w=8, r=3, s=3), "more than"),
    (gluon_geom(n=1, c=32, k=32, g=2, d=4, h=8, w=8, t=3, r=3, s=3, dims=3), "2D"),
    (gluon_geom(n=1, c=32, k=32, g=2, h=8, w=8, r=5, s=5), "taps"),
    (gluon_geom(n=1, c=32, k=32, g=2, h=8, w=8, r=3, s=3, layout="contiguous"),
     "channels_last"),
    (gluon_geom(n=1, c=32, k=32, g=2, h=8, w=8, r=3, s=3, dtype="float32"), "float32"),
    (gluon_geom(n=1, c=61, k=122, g=61, h=8, w=8, r=3, s=3), "multiples of 16"),
    (gluon_geom(n=1, c=440, k=440, g=55, h=8, w=8, r=3, s=3), "multiples of 16"),
]


def gluon_ptx_sm90(kernel, pointers: dict[str, str], constexprs: dict, aligned: tuple,
                   num_warps: int) -> tuple[str, int]:
    """PTX for sm_90 and shared memory in bytes of a Gluon kernel whose arguments are the
    ``pointers`` (name: Triton pointer type, such as "*fp16"), 32-bit integers and the
    ``constexprs``; the ``aligned`` arguments are 16-byte aligned pointers or multiples of
    16 (as Triton specialises them at a real launch). No GPU needed."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    names = kernel.arg_names
    sig = {n: pointers.get(n, "i32") for n in names}
    sig.update(dict.fromkeys(constexprs, "constexpr"))
    src = GluonASTSource(kernel, sig,
                         constexprs={(names.index(c),): v for c, v in constexprs.items()},
                         attrs={(names.index(n),): [["tt.divisibility", 16]] for n in aligned})
    out = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    return out.asm["ptx"], out.metadata.shared


def gluon_wgrad_ptx_sm90(kernel, dtype: str, constexprs: dict, num_warps: int) -> tuple[str, int]:
    """``gluon_ptx_sm90`` of a Gluon wgrad kernel: dY, X and dW pointers of ``dtype``, the
    float32 workspace, aligned strides and channel counts."""
    el = {"float16": "*fp16", "bfloat16": "*bf16"}[dtype]
    pointers = {"dy_ptr": el, "x_ptr": el, "dw_ptr": el, "ws_ptr": "*fp32"}
    aligned = (*pointers, "syn", "syh", "syw", "sxn", "sxh", "sxw", "swk", "CTOT", "KTOT",
               "WS_STRIDE", *{"syd", "sxd"} & set(kernel.arg_names))
    return gluon_ptx_sm90(kernel, pointers, constexprs, aligned, num_warps)

class PickFamily:
    """A chooser that picks one family's first candidate: decisions that record plans,
    unlike ``force``."""

    name = "pick-family"

    def __init__(self, family: str) -> None:
        self.family = family
        self.identity = f"pick-family:{family}"

    def choose(self, geom, cands, device):
        from convdispatch.dispatcher.decision import Decision

        pick = next(c for c in cands if c.family == self.family)
        return Decision(pick, "test", self.name)


def unaligned(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` with its strides, one element past a 16-byte boundary."""
    span = t.untyped_storage().nbytes() // t.element_size()
    buf = torch.empty(span + 1, dtype=t.dtype, device=t.device)
    return buf.as_strided(t.shape, t.stride(), 1).copy_(t)


def flat_image(t, n, a0, rows0, cols0, sth, stw, rho, sig, need, c):
    """A flat-grid kernel's shared-memory image in torch (float64, [XP, channels]) whose
    grid position f holds t[n, :, (a0 + f // WP) * sth + rho - rows0,
    (f % WP) * stw + sig - cols0] (``c``: ``flat_consts``): zero past ``need`` and the
    map's edges, NaN past XCOPY (never copied, so never to be read)."""
    import torch

    f = torch.arange(c["XP"])
    ih = (a0 + f // c["WP"]) * sth + rho - rows0
    iw = (f % c["WP"]) * stw + sig - cols0
    ok = (f < need) & (ih >= 0) & (ih < t.shape[2]) & (iw >= 0) & (iw < t.shape[3])
    img = torch.zeros(c["XP"], t.shape[1], dtype=torch.float64)
    img[ok] = t[n, :, ih[ok], iw[ok]].T
    img[c["XCOPY"]:] = float("nan")
    return img


SHIPPED_H100 = Path(__file__).resolve().parents[1] / "models" / "h100"
# What train() records of its rows that a model saved before them lacks (model_store reads
# such a model as legacy: LEGACY_CONFIG_KEYS, NEW_SINCE_LEGACY_VALUES, ...).
RECORDED_TRAINING = ("config_keys", "config_values", "family_config_values")


def legacy_model_copy(src: Path, dst: Path) -> Path:
    """A copy of the model directory ``src`` at ``dst`` whose schema records none of
    RECORDED_TRAINING, as the models saved before they were recorded."""
    out = Path(shutil.copytree(src, dst))
    schema = json.loads((out / "schema.json").read_text())
    for key in RECORDED_TRAINING:
        schema.pop(key, None)
    (out / "schema.json").write_text(json.dumps(schema, indent=2))
    return out
