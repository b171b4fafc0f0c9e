"""Evaluate a LightGBM text model with numpy alone (the GPU image has no lightgbm).

Supported: numerical splits of single-output models whose prediction is the raw
sum of leaf values (regression, lambdarank, ...). Missing values follow
LightGBM's rules: per-node missing type (None / Zero / NaN) and default
direction from ``decision_type``; values with |x| <= 1e-35 count as 0, as in
LightGBM's row parser. Categorical splits and linear trees are refused.

All trees are concatenated into one node table; leaves are nodes that point
to themselves, so all (row, tree) pairs walk in lockstep, a few vectorised
gathers per step, finished pairs dropped as they accumulate. Columns equal on
every row (at dispatch: the geometry's) are decided once: their nodes are
jumped over before the walk, which then only visits nodes on varying columns.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

_ZERO = 1e-35  # LightGBM's kZeroThreshold
_CATEGORICAL, _DEFAULT_LEFT = 1, 2
_MISSING_ZERO, _MISSING_NAN = 1, 2
# Objectives whose predict() is the raw score (no link function or output transform).
RAW_OBJECTIVES = ("regression", "regression_l2", "regression_l1", "l2", "l1", "huber", "fair",
                  "quantile", "mape", "lambdarank", "rank_xendcg")


class ModelLoadError(ValueError):
    """A model file is missing, truncated, corrupt or does not match the code."""


def sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class TreeEnsemble:
    """A parsed LightGBM model: node tables of all trees and how to walk them.

    Internal nodes of all trees are numbered first (0 .. n_internal-1), then
    leaves, so "is this a leaf" is one comparison.
    """

    feature_names: tuple[str, ...]
    objective: str
    n_trees: int
    max_depth: int
    n_internal: int
    roots: np.ndarray  # [n_trees] node id of each root
    feature: np.ndarray  # [nodes] split feature (0 for leaves)
    threshold: np.ndarray  # [nodes] float64 (+inf for leaves)
    children: np.ndarray  # [2 * nodes] left, right interleaved; leaves point to themselves
    missing: np.ndarray  # [nodes] 0 none, 1 zero, 2 nan
    default_left: np.ndarray  # [nodes] bool
    value: np.ndarray  # [nodes] leaf value (0 for internal nodes)
    scale: float = 1.0  # 1 / n_trees for average_output models (random forest)

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def prepare(self) -> None:
        """Build the walk's tables now (at load) rather than in the first decision."""
        for name in ("_zero_rule", "_split2", "_children2", "_internal_ids", "_left_slots",
                     "_value2", "_jump_rounds"):
            getattr(self, name)

    @cached_property
    def _zero_rule(self) -> bool:
        return bool((self.missing == _MISSING_ZERO).any())

    # The walk uses doubled node ids (2 * node): the child of id d is children2[d + right],
    # which saves a multiply per step. Tables indexed by doubled id repeat each entry.
    @cached_property
    def _split2(self) -> np.ndarray:
        """(feature, threshold) records by doubled id: one gather fetches both."""
        rec = np.empty(len(self.feature), dtype=[("f", np.intp), ("t", np.float64)])
        rec["f"], rec["t"] = self.feature, self.threshold
        return np.repeat(rec, 2)

    @cached_property
    def _children2(self) -> np.ndarray:
        return 2 * self.children

    @cached_property
    def _internal_ids(self) -> np.ndarray:
        return np.arange(self.n_internal)

    @cached_property
    def _left_slots(self) -> np.ndarray:
        return 2 * self._internal_ids

    @cached_property
    def _value2(self) -> np.ndarray:
        return np.repeat(self.value, 2)

    @cached_property
    def _jump_rounds(self) -> int:
        """Pointer-doubling rounds that cover a chain of max_depth constant nodes."""
        return max(1, math.ceil(math.log2(max(self.max_depth, 1))))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Scores [n_rows] (float64), equal to lightgbm's ``Booster.predict(X)``.

        The supported objectives have no output transform, so this is the sum of
        the trees' leaf values (their mean for ``average_output`` random forests,
        where lightgbm's ``raw_score=True`` returns the sum instead).
        """
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"expected a 2D array with {self.n_features} feature columns, "
                             f"got shape {X.shape}")
        n = X.shape[0]
        if n == 0 or self.n_trees == 0:
            return np.zeros(n)
        X = X.astype(np.float64)
        X[np.abs(X) <= _ZERO] = 0.0  # LightGBM drops such values from a row: they read as 0
        nan = np.isnan(X)
        has_nan = bool(nan.any())
        general = self._zero_rule or has_nan
        # Columns equal on every row (the geometry, at dispatch) decide their nodes once.
        same = X == X[0]
        if has_nan:
            same |= nan & nan[0]
        start, children2 = self._resolve_constant(same.all(axis=0), X[0])
        done = start >= 2 * self.n_internal  # trees the constant columns alone decide
        fixed = float(self._value2[start[done]].sum())
        live = start[~done]
        if not live.size:
            return np.full(n, fixed * self.scale)
        # (row, tree) pairs, row-major: node = doubled id, off = the row's offset in X.
        node = np.broadcast_to(live, (n, live.size)).ravel()
        off = np.repeat(np.arange(0, n * self.n_features, self.n_features), live.size)
        node = self._walk(X.ravel(), node, off, children2, general)
        return (fixed + self._value2[node].reshape(n, live.size).sum(axis=1)) * self.scale

    def _resolve_constant(self, const: np.ndarray, x0: np.ndarray):
        """Doubled ids of the roots and doubled child table with every node on a constant
        column jumped over. Evaluates all internal nodes at once: fewer, larger numpy
        operations beat working on the constant subset."""
        n_int = self.n_internal
        feat = self.feature[:n_int]
        on_const = const[feat]
        if not on_const.any():
            return 2 * self.roots, self._children2
        general = self._zero_rule or bool(np.isnan(x0).any())
        right = self._go_right(x0[feat], self._internal_ids, general)
        jump = np.arange(len(self.feature))
        jump[:n_int] = np.where(on_const, self.children[self._left_slots + right],
                                self._internal_ids)
        # Pointer doubling over chains of <= max_depth constant nodes. A chain left
        # unresolved would still be correct: the walk evaluates its nodes like any other.
        for _ in range(self._jump_rounds):
            jump[:n_int] = jump[jump[:n_int]]
        jump2 = 2 * jump
        return jump2[self.roots], jump2[self.children]

    def _walk(self, flat, node, off, children2, general) -> np.ndarray:
        """Leaves (doubled ids) of the (row, tree) pairs that start at doubled ids ``node``;
        ``off`` is each pair's row offset into ``flat``."""
        stop = 2 * self.n_internal
        out, todo = node, None  # todo None: node still holds every pair, in order
        for _ in range(self.max_depth):
            if general:
                right = self._go_right(flat[off + self.feature[node >> 1]], node >> 1, True)
            else:
                rec = self._split2[node]
                right = flat[off + rec["f"]] > rec["t"]
            node = children2[node + right]
            inner = node < stop
            k = np.count_nonzero(inner)
            # Trees end at different depths: drop finished pairs once enough have finished
            # (each drop costs a few gathers, so not after every step).
            if k == 0 or 2 * k <= len(node):
                if todo is None:
                    out = node
                else:
                    out[todo] = node
                if k == 0:
                    return out
                keep = np.flatnonzero(inner)
                todo = keep if todo is None else todo[keep]
                node, off = node[keep], off[keep]
        if todo is None:
            return node
        out[todo] = node
        return out

    def _go_right(self, x: np.ndarray, node: np.ndarray, general: bool) -> np.ndarray:
        if not general:
            return x > self.threshold[node]
        mt = self.missing[node]
        nan = np.isnan(x)
        x = np.where(nan & (mt != _MISSING_NAN), 0.0, x)
        use_default = ((mt == _MISSING_ZERO) & (np.abs(x) <= _ZERO)) | ((mt == _MISSING_NAN) & nan)
        return np.where(use_default, ~self.default_left[node], ~(x <= self.threshold[node]))


def _numbers(text: str, what: str, count: int, source: str, kind: type) -> np.ndarray:
    """``count`` whitespace-separated ints or floats of one model-file field."""
    try:
        arr = np.array([kind(v) for v in text.split()],
                       dtype=np.int64 if kind is int else np.float64)
    except ValueError:
        word = "non-integer" if kind is int else "non-numeric"
        raise ModelLoadError(f"{source}: {what} holds a {word} value") from None
    if arr.size != count:
        raise ModelLoadError(f"{source}: {what} has {arr.size} values, expected {count}")
    return arr


def _key_values(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        key, sep, val = line.partition("=")
        if sep:
            out[key.strip()] = val.strip()
    return out


@dataclass
class _Tree:
    n_leaves: int
    feature: np.ndarray
    threshold: np.ndarray
    decision: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf_value: np.ndarray


def _parse_tree(block: list[str], index: int, n_features: int, source: str) -> _Tree:
    kv = _key_values(block)
    where = f"{source}: Tree={index}"
    try:
        n_leaves = int(kv["num_leaves"])
    except (KeyError, ValueError):
        raise ModelLoadError(f"{where} has no valid num_leaves") from None
    if n_leaves < 1:
        raise ModelLoadError(f"{where} has num_leaves={n_leaves}")
    if kv.get("num_cat", "0") != "0":
        raise ModelLoadError(f"{where} uses categorical splits, which tree_model does not "
                             "evaluate (keep features numeric)")
    if kv.get("is_linear", "0") != "0":
        raise ModelLoadError(f"{where} is a linear tree, which tree_model does not evaluate")
    if "leaf_value" not in kv:
        raise ModelLoadError(f"{where} has no leaf_value line (truncated file?)")
    leaf_value = _numbers(kv["leaf_value"], f"Tree={index} leaf_value", n_leaves, source, float)
    m = n_leaves - 1
    if m == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _Tree(1, empty, np.zeros(0), empty, empty, empty, leaf_value)
    for key in ("split_feature", "threshold", "decision_type", "left_child", "right_child"):
        if key not in kv:
            raise ModelLoadError(f"{where} has no {key} line (truncated file?)")
    feature = _numbers(kv["split_feature"], f"Tree={index} split_feature", m, source, int)
    threshold = _numbers(kv["threshold"], f"Tree={index} threshold", m, source, float)
    decision = _numbers(kv["decision_type"], f"Tree={index} decision_type", m, source, int)
    left = _numbers(kv["left_child"], f"Tree={index} left_child", m, source, int)
    right = _numbers(kv["right_child"], f"Tree={index} right_child", m, source, int)
    if feature.min() < 0 or feature.max() >= n_features:
        raise ModelLoadError(f"{where} splits on a feature index outside 0..{n_features - 1}")
    if (decision & _CATEGORICAL).any():
        raise ModelLoadError(f"{where} has a categorical split, which tree_model does not "
                             "evaluate (keep features numeric)")
    if np.isnan(threshold).any():
        raise ModelLoadError(f"{where} has a NaN threshold")
    for kids, side in ((left, "left_child"), (right, "right_child")):
        if (kids >= m).any() or (kids < -n_leaves).any():
            raise ModelLoadError(f"{where} {side} points outside the tree")
    return _Tree(n_leaves, feature, threshold, decision, left, right, leaf_value)


def _depth(tree: _Tree, where: str) -> int:
    """Longest root-to-leaf path; also checks every node is reached exactly once."""
    if tree.n_leaves == 1:
        return 0
    m = tree.n_leaves - 1
    seen_nodes = np.zeros(m, dtype=int)
    seen_leaves = np.zeros(tree.n_leaves, dtype=int)
    depth, frontier, level = 0, [0], 0
    seen_nodes[0] = 1
    while frontier:
        level += 1
        nxt = []
        for node in frontier:
            for kid in (tree.left[node], tree.right[node]):
                if kid >= 0:
                    seen_nodes[kid] += 1
                    nxt.append(int(kid))
                else:
                    seen_leaves[~kid] += 1
                    depth = max(depth, level)
        if level > m + 1:
            break
        frontier = nxt
    if (seen_nodes != 1).any() or (seen_leaves != 1).any():
        raise ModelLoadError(f"{where} is not a tree (a node is unreachable or shared)")
    return depth


def parse_model(text: str, source: str = "model") -> TreeEnsemble:
    """Parse LightGBM's ``save_model`` text; ``source`` names the file in errors."""
    if not text.strip():
        raise ModelLoadError(f"{source}: the file is empty")
    lines = text.splitlines()
    if lines[0].strip() != "tree":
        raise ModelLoadError(f"{source}: not a LightGBM text model (first line is "
                             f"{lines[0][:40]!r}, expected 'tree')")
    try:
        end = next(i for i, ln in enumerate(lines) if ln.strip() == "end of trees")
    except StopIteration:
        raise ModelLoadError(f"{source}: no 'end of trees' line: the file is truncated") from None
    starts = [i for i in range(end) if lines[i].startswith("Tree=")]
    header = _key_values(lines[:starts[0] if starts else end])
    for key, want in (("num_class", "1"), ("num_tree_per_iteration", "1")):
        if header.get(key, "1") != want:
            raise ModelLoadError(f"{source}: {key}={header[key]}; only single-output models "
                                 "are supported")
    objective = header.get("objective", "")
    obj_words = objective.split()
    if not obj_words or obj_words[0] not in RAW_OBJECTIVES or "sqrt" in obj_words:
        raise ModelLoadError(f"{source}: objective {objective!r} is not supported "
                             f"(raw-score objectives: {RAW_OBJECTIVES})")
    try:
        n_features = int(header["max_feature_idx"]) + 1
    except (KeyError, ValueError):
        raise ModelLoadError(f"{source}: no valid max_feature_idx in the header") from None
    names = tuple(header.get("feature_names", "").split())
    if len(names) != n_features:
        raise ModelLoadError(f"{source}: {len(names)} feature_names for {n_features} features")
    sizes = header.get("tree_sizes")
    if sizes is not None and len(sizes.split()) != len(starts):
        raise ModelLoadError(f"{source}: header lists {len(sizes.split())} trees, the file "
                             f"holds {len(starts)} (truncated or edited)")
    trees = []
    for j, start in enumerate(starts):
        stop = starts[j + 1] if j + 1 < len(starts) else end
        label = lines[start].partition("=")[2].strip()
        if label != str(j):
            raise ModelLoadError(f"{source}: tree {j} is labelled {lines[start]!r}")
        trees.append(_parse_tree(lines[start + 1:stop], j, n_features, source))
    average = any(ln.strip() == "average_output" for ln in lines[:starts[0] if starts else end])
    return _assemble(trees, names, obj_words[0], average, source)


def _assemble(trees: list[_Tree], names, objective: str, average: bool,
              source: str) -> TreeEnsemble:
    n_internal = sum(t.n_leaves - 1 for t in trees)
    total = n_internal + sum(t.n_leaves for t in trees)
    feature = np.zeros(total, dtype=np.intp)
    threshold = np.full(total, np.inf)
    children = np.zeros(2 * total, dtype=np.intp)
    missing = np.zeros(total, dtype=np.int8)
    default_left = np.zeros(total, dtype=bool)
    value = np.zeros(total)
    roots = np.zeros(len(trees), dtype=np.intp)
    base, leaf_base, max_depth = 0, n_internal, 0
    for j, t in enumerate(trees):
        m = t.n_leaves - 1
        max_depth = max(max_depth, _depth(t, f"{source}: Tree={j}"))
        ids = np.arange(base, base + m)
        feature[ids] = t.feature
        threshold[ids] = t.threshold
        missing[ids] = (t.decision >> 2) & 3
        default_left[ids] = (t.decision & _DEFAULT_LEFT) != 0
        for side, kids in ((0, t.left), (1, t.right)):
            children[2 * ids + side] = np.where(kids >= 0, base + kids, leaf_base + ~kids)
        leaves = np.arange(leaf_base, leaf_base + t.n_leaves)
        children[2 * leaves] = leaves
        children[2 * leaves + 1] = leaves
        value[leaves] = t.leaf_value
        roots[j] = base if m else leaf_base
        base += m
        leaf_base += t.n_leaves
    if (missing == 3).any():
        raise ModelLoadError(f"{source}: unknown missing type in decision_type")
    scale = 1.0 / len(trees) if average and trees else 1.0
    ens = TreeEnsemble(tuple(names), objective, len(trees), max_depth, n_internal, roots,
                       feature, threshold, children, missing, default_left, value, scale)
    ens.prepare()
    return ens


def load_ensemble(path: str | Path) -> TreeEnsemble:
    """Read and parse a model file; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelLoadError(f"{path}: model file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{path}: cannot read the model file: {e}") from None
    return parse_model(text, str(path))


__all__ = ["ModelLoadError", "TreeEnsemble", "load_ensemble", "parse_model", "sha256_file"]
