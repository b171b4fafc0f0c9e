"""The geometry of one convolution: everything a kernel choice depends on.

2D convolutions are 3D convolutions with D = T = 1, so every family and the
feature code see one shape. Padding is stored per side (low, high) because
torch's ``padding='same'`` is asymmetric for even kernels.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

DTYPES = ("float16", "bfloat16", "float32")
# float64 geometries exist for the gradient kernels' float64 checks (gradcheck under
# the interpreter); no forward family and no sweep takes them.
GEOM_DTYPES = (*DTYPES, "float64")
LAYOUTS = ("channels_last", "contiguous")
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def _triple(v) -> tuple[int, int, int]:
    return tuple(int(x) for x in v)  # type: ignore[return-value]


@dataclass(frozen=True)
class ConvGeometry:
    """Shapes and hyper-parameters of a forward convolution.

    Sizes: ``n`` batch, ``c`` input channels, ``k`` output channels, ``g``
    groups, input ``d x h x w``, filter ``t x r x s``. ``stride``, ``pad``,
    ``dilation`` are (depth, height, width) triples; ``pad_hi`` the high-side
    padding when it differs from ``pad``. ``dims`` is 2 or 3.
    """

    n: int
    c: int
    k: int
    h: int
    w: int
    r: int
    s: int
    g: int = 1
    d: int = 1
    t: int = 1
    stride: tuple[int, int, int] = (1, 1, 1)
    pad: tuple[int, int, int] = (0, 0, 0)
    dilation: tuple[int, int, int] = (1, 1, 1)
    pad_hi: tuple[int, int, int] | None = None
    dims: int = 2
    dtype: str = "float16"
    layout: str = "channels_last"
    bias: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "stride", _triple(self.stride))
        object.__setattr__(self, "pad", _triple(self.pad))
        object.__setattr__(self, "dilation", _triple(self.dilation))
        if self.pad_hi is not None:
            hi = _triple(self.pad_hi)
            object.__setattr__(self, "pad_hi", None if hi == self.pad else hi)
        self.check()

    def check(self) -> None:
        """Raise ValueError if the geometry is not a valid convolution."""
        if self.dims not in (2, 3):
            raise ValueError(f"dims must be 2 or 3, got {self.dims}")
        if self.dtype not in GEOM_DTYPES:
            raise ValueError(f"dtype must be one of {GEOM_DTYPES}, got {self.dtype!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        for name in ("n", "c", "k", "h", "w", "r", "s", "g", "d", "t"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int, got {type(v).__name__}")
            if v < (0 if name == "n" else 1):
                raise ValueError(f"{name} must be positive, got {v}")
        if self.dims == 2 and (self.d != 1 or self.t != 1):
            raise ValueError("a 2D geometry has d == t == 1")
        if self.c % self.g or self.k % self.g:
            raise ValueError(
                f"groups={self.g} must divide in_channels={self.c} and out_channels={self.k}"
            )
        if min(self.stride) < 1 or min(self.dilation) < 1:
            raise ValueError("stride and dilation must be >= 1")
        if min(self.pad) < 0 or min(self.pad_hi or (0,)) < 0:
            raise ValueError("padding must be >= 0")
        if min(self.out_spatial) < 1:
            raise ValueError(
                f"output size {self.out_spatial} is too small: the kernel "
                f"{(self.t, self.r, self.s)} does not fit the padded input "
                f"{(self.d, self.h, self.w)}"
            )

    # -- derived sizes -------------------------------------------------------
    @property
    def pads_hi(self) -> tuple[int, int, int]:
        return self.pad_hi if self.pad_hi is not None else self.pad

    @property
    def out_spatial(self) -> tuple[int, int, int]:
        """(OD, OH, OW)."""
        out = []
        for size, k, st, lo, hi, dl in zip(
            (self.d, self.h, self.w), (self.t, self.r, self.s), self.stride,
            self.pad, self.pads_hi, self.dilation,
        ):
            out.append((size + lo + hi - dl * (k - 1) - 1) // st + 1)
        return tuple(out)  # type: ignore[return-value]

    @property
    def cg(self) -> int:
        """Input channels per group."""
        return self.c // self.g

    @property
    def kg(self) -> int:
        """Output channels per group."""
        return self.k // self.g

    @property
    def gemm_m(self) -> int:
        od, oh, ow = self.out_spatial
        return self.n * od * oh * ow

    @property
    def gemm_n(self) -> int:
        return self.kg

    @property
    def gemm_k(self) -> int:
        return self.cg * self.t * self.r * self.s

    @property
    def flops(self) -> int:
        return 2 * self.gemm_m * self.gemm_n * self.gemm_k * self.g

    @property
    def elem_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def min_bytes(self) -> int:
        """Bytes moved if input, weight and output each cross memory once."""
        x = self.n * self.c * self.d * self.h * self.w
        wt = self.k * self.cg * self.t * self.r * self.s
        y = self.gemm_m * self.k
        return (x + wt + y) * self.elem_bytes

    @property
    def pass_bytes(self) -> int:
        """Bytes a backward pass needing dX and dW moves if each tensor crosses memory once:
        dY, X and W read, dX and dW written."""
        return 2 * self.min_bytes - self.gemm_m * self.k * self.elem_bytes

    @property
    def has_depth(self) -> bool:
        """Whether the depth axis does anything (else kernels skip its index work)."""
        return self.d > 1 or self.t > 1 or self.pad[0] > 0 or self.pads_hi[0] > 0

    @property
    def is_depthwise(self) -> bool:
        return self.g > 1 and self.cg == 1

    @property
    def is_pointwise(self) -> bool:
        return (self.t, self.r, self.s) == (1, 1, 1) and self.pad == (0, 0, 0) \
            and self.pad_hi is None

    # -- identity ------------------------------------------------------------
    def key(self) -> tuple:
        """Hashable identity used by the decision cache and the sweep."""
        return (self.dims, self.n, self.c, self.k, self.g, self.d, self.h, self.w,
                self.t, self.r, self.s, self.stride, self.pad, self.pads_hi,
                self.dilation, self.dtype, self.layout, self.bias)

    def as_row(self) -> dict:
        """Flat columns for CSVs (see data/README.md for the schema)."""
        d = asdict(self)
        row = {k: d[k] for k in ("n", "c", "k", "g", "d", "h", "w", "t", "r", "s")}
        for i, axis in enumerate("dhw"):
            row[f"stride_{axis}"] = self.stride[i]
            row[f"pad_{axis}"] = self.pad[i]
            row[f"dil_{axis}"] = self.dilation[i]
        row.update(dims=self.dims, dtype=self.dtype, layout=self.layout)
        return row

    @classmethod
    def from_row(cls, row) -> ConvGeometry:
        """Inverse of ``as_row``; accepts a dict or a pandas row."""
        def get(name):
            return int(row[name])

        return cls(
            n=get("n"), c=get("c"), k=get("k"), g=get("g"), d=get("d"), h=get("h"),
            w=get("w"), t=get("t"), r=get("r"), s=get("s"),
            stride=tuple(get(f"stride_{a}") for a in "dhw"),
            pad=tuple(get(f"pad_{a}") for a in "dhw"),
            dilation=tuple(get(f"dil_{a}") for a in "dhw"),
            dims=get("dims"), dtype=str(row["dtype"]),
            layout=str(row["layout"]) if "layout" in row else "channels_last",
        )

    def describe(self) -> str:
        sp = f"{self.d}x{self.h}x{self.w}" if self.dims == 3 else f"{self.h}x{self.w}"
        fl = f"{self.t}x{self.r}x{self.s}" if self.dims == 3 else f"{self.r}x{self.s}"
        st = self.stride if self.dims == 3 else self.stride[1:]
        lead = 3 - self.dims
        pd = f"pad={self.pad[lead:]}"
        if self.pad_hi is not None:
            pd += f" pad_hi={self.pad_hi[lead:]}"
        return (f"N={self.n} C={self.c} {sp} -> K={self.k} {fl} stride={st} {pd}"
                f"{' dil=' + str(self.dilation[3 - self.dims:]) if max(self.dilation) > 1 else ''}"
                f"{' groups=' + str(self.g) if self.g > 1 else ''} {self.dtype} {self.layout}")
