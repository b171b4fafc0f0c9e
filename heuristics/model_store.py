"""A model directory: model.txt (LightGBM text), schema.json (what the code must match),
meta.json (provenance and metrics), and guard.txt where the model ships a guard
(heuristics/guard.py). Loading needs numpy only.

Every model file's sha256 is recorded in schema.json and checked on every load, so
a corrupt, truncated or swapped file is refused. The model's identity is the
sha256 of model.txt, or, with a guard, of both files' hashes and the guard's
settings.

``find_model`` rule: ``models/<device_key>/`` for the GPU if it exists; else,
with ``nearest``, the shipped model of the same architecture family (same
compute-capability major, e.g. 9.x Hopper): same (major, minor) first, then
the closest SM count, then the key name. Unknown GPU names have no
architecture, so they get no nearest model unless a DeviceSpec is passed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..kernels.base import CONFIG_KEYS, DIRECTIONS, Candidate
from ..kernels.device import KNOWN, DeviceSpec, device_key
from ..kernels.geometry import ConvGeometry
from .features import (
    FAMILY_DIRECTION,
    FEATURE_NAMES,
    N_FEATURES,
    SCHEMA_VERSION,
    feature_matrix,
)
from .guard import GUARD_METHOD, GuardParams, demote, guarded_scores, vetoed_in_top
from .tree_model import ModelLoadError, TreeEnsemble, load_ensemble, sha256_file

MODEL_FILE, SCHEMA_FILE, META_FILE = "model.txt", "schema.json", "meta.json"
GUARD_FILE = "guard.txt"
# The config keys a model saved before schema.json recorded 'config_keys' may have seen:
# every key there was then. A key added since ranks last under such a model.
LEGACY_CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "TILE_W",
                      "L1_TAPS", "FILTER_ROWS", "ITEMS", "WGMMA", "num_warps", "num_stages")
# Config values added since the models that record no 'config_values' were saved: such a
# model never saw them (grouped_flat's one item a program, call 298), of any family or of
# one family's configs (grouped_flat's 64-wide tiles: other families' configs had
# BLOCK_N=64 all along).
NEW_SINCE_LEGACY_VALUES = {"ITEMS": (1,)}
NEW_SINCE_LEGACY_FAMILY_VALUES = {"grouped_flat": {"BLOCK_N": (64,)}}
MODELS_ROOT = Path(__file__).resolve().parent.parent / "models"
TRANSFORMS = ("exp", "negate", "none")


@dataclass
class LoadedModel:
    """A verified model directory, ready to score candidates."""

    path: Path
    sha256: str
    gpu: str
    method: str
    schema: dict
    ensemble: TreeEnsemble = field(repr=False)
    meta: dict = field(default_factory=dict, repr=False)
    guard: TreeEnsemble | None = field(default=None, repr=False)
    guard_params: GuardParams | None = None

    @property
    def identity(self) -> str:
        if self.guard is None:
            return self.sha256[:12]
        g = self.schema["guard"]
        text = f"{self.sha256} {g['model_sha256']} {g['top_k']} {g['max_log_slowdown']}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def score_unit(self) -> str:
        return self.schema["score"]["unit"]

    @property
    def direction(self) -> str:
        """'forward', 'dgrad' or 'wgrad': what the model's families compute."""
        return self.schema.get("direction", "forward")

    @property
    def families(self) -> frozenset[str]:
        """Families the model saw in training (schema.json 'families', default every
        family of its direction); others are ranked after them with score inf."""
        return frozenset(self.schema.get("families", _families_of(self.direction)))

    @property
    def config_keys(self) -> frozenset[str]:
        """Config keys the model saw in training (schema.json 'config_keys'; a model saved
        before they were recorded: LEGACY_CONFIG_KEYS). A candidate whose config has any
        other is ranked after the rest with score inf, as an unseen family is: its
        features read as a config the model knows, so its score would be a guess."""
        return frozenset(self.schema.get("config_keys", LEGACY_CONFIG_KEYS))

    @property
    def family_config_values(self) -> dict[str, dict[str, frozenset]] | None:
        """Each family's config keys and their values in training (schema.json
        'family_config_values'), or None for a model saved before they were recorded."""
        fams = self.schema.get("family_config_values")
        return None if fams is None else {
            f: {k: frozenset(v) for k, v in values.items()} for f, values in fams.items()}

    @property
    def config_values(self) -> dict[str, frozenset] | None:
        """Each config key's values the model saw in training (schema.json
        'config_values'), or None for a model saved before they were recorded (it saw every
        value but NEW_SINCE_LEGACY_VALUES)."""
        values = self.schema.get("config_values")
        return None if values is None else {k: frozenset(v) for k, v in values.items()}

    def unseen(self, candidates: Sequence[Candidate]) -> list[bool]:
        """For each candidate, whether its family, a key of its config or that key's value
        is one the model never saw in training (in that family's rows, where the model
        records them: another family's configs may have held the value)."""
        per_family = self.family_config_values
        if per_family is not None:
            return [c.family not in per_family
                    or any(v not in per_family[c.family].get(k, ()) for k, v in c.config.items())
                    for c in candidates]
        fams, keys, values = self.families, self.config_keys, self.config_values
        if values is None:
            values = {}
            new, family_new = NEW_SINCE_LEGACY_VALUES, NEW_SINCE_LEGACY_FAMILY_VALUES
        else:
            new, family_new = {}, {}
        return [c.family not in fams or not keys.issuperset(c.config.keys())
                or any(v in new.get(k, ()) or v in family_new.get(c.family, {}).get(k, ())
                       or (k in values and v not in values[k])
                       for k, v in c.config.items())
                for c in candidates]

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Scores (float64), lower = predicted faster, for a [n, N_FEATURES] matrix."""
        raw = self.ensemble.predict(features)
        transform = self.schema["score"]["transform"]
        if transform == "exp":
            return np.exp(raw)
        return -raw if transform == "negate" else raw

    def row_scores(self, features: np.ndarray, problem: np.ndarray) -> np.ndarray:
        """Scores of many problems' rows at once (reports), guard applied as in ``rank``."""
        scores = self.predict(features)
        if self.guard is None:
            return scores
        return guarded_scores(problem, scores, self.guard.predict(features), self.guard_params)

    def rank(self, geom: ConvGeometry, candidates: Sequence[Candidate],
             device: DeviceSpec) -> list[tuple[Candidate, float]]:
        """Candidates best first; equal scores ordered by candidate id.

        A family or config key absent from the training data gets score inf
        (``unseen``): the model has never seen it, so its prediction would be a guess.
        With a guard, the
        ranker's top candidates that it vetoes come last (heuristics/guard.py).
        """
        return self.rank_with_vetoes(geom, candidates, device)[0]

    def rank_with_vetoes(self, geom: ConvGeometry, candidates: Sequence[Candidate],
                         device: DeviceSpec
                         ) -> tuple[list[tuple[Candidate, float]], list[Candidate]]:
        """``rank``'s list and the candidates the guard moved back (ranker order)."""
        cands = list(candidates)
        if not cands:
            return [], []
        X = feature_matrix(geom, cands, device)
        scores = self.predict(X)
        unseen = self.unseen(cands)
        if any(unseen):
            scores[unseen] = np.inf
        vetoed_list: list[Candidate] = []
        if self.guard is not None and len(cands) > 1:
            top = np.argsort(scores, kind="stable")[:self.guard_params.top_k]
            top = top[np.isfinite(scores[top])]
            vetoed = np.zeros(len(cands), dtype=bool)
            vetoed[top] = vetoed_in_top(self.guard.predict(X[top]), self.guard_params)
            vetoed_list = [cands[i] for i in top if vetoed[i]]
            scores = demote(scores, vetoed)
        order = np.argsort(scores, kind="stable")
        s = scores[order]
        if len(s) > 1 and (s[1:] == s[:-1]).any():  # rare: only then build the ids
            order = sorted(range(len(cands)), key=lambda i: (scores[i], cands[i].id))
        return [(cands[i], float(scores[i])) for i in order], vetoed_list


def _read_json(path: Path) -> dict:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelLoadError(f"{path}: unreadable JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ModelLoadError(f"{path}: expected a JSON object")
    return obj


def _families_of(direction: str) -> list[str]:
    return [f for f, d in FAMILY_DIRECTION.items() if d == direction]


def _check_schema(schema: dict, path: Path) -> None:
    version = schema.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ModelLoadError(f"{path}: feature schema version {version!r}, this code computes "
                             f"version {SCHEMA_VERSION}: retrain the model")
    names = schema.get("feature_names")
    if names != list(FEATURE_NAMES):
        if not isinstance(names, list):
            raise ModelLoadError(f"{path}: feature_names is missing or not a list")
        diff = next((i for i, (a, b) in enumerate(zip(names, FEATURE_NAMES)) if a != b),
                    min(len(names), N_FEATURES))
        got = names[diff] if diff < len(names) else "<end>"
        want = FEATURE_NAMES[diff] if diff < N_FEATURES else "<end>"
        raise ModelLoadError(f"{path}: feature_names differ from this code's FEATURE_NAMES at "
                             f"position {diff} ({got!r} vs {want!r}): retrain the model")
    score = schema.get("score")
    if not isinstance(score, dict) or score.get("transform") not in TRANSFORMS:
        raise ModelLoadError(f"{path}: 'score' must give a transform in {TRANSFORMS}")
    sha = schema.get("model_sha256")
    if not isinstance(sha, str) or len(sha) != 64:
        raise ModelLoadError(f"{path}: model_sha256 is missing or malformed")
    direction = schema.get("direction", "forward")
    if direction not in DIRECTIONS:
        raise ModelLoadError(f"{path}: 'direction' must be one of {DIRECTIONS}, got {direction!r}")
    fams = schema.get("families", _families_of(direction))
    if not isinstance(fams, list) or not fams or any(f not in FAMILY_DIRECTION for f in fams):
        raise ModelLoadError(f"{path}: 'families' must be a non-empty list of known families "
                             f"{list(FAMILY_DIRECTION)}, got {fams!r}")
    others = [f for f in fams if FAMILY_DIRECTION[f] != direction]
    if others:
        raise ModelLoadError(f"{path}: a {direction!r} model lists families of another "
                             f"direction: {others}")
    keys = schema.get("config_keys", LEGACY_CONFIG_KEYS)
    if (not isinstance(keys, list | tuple) or not keys
            or any(k not in CONFIG_KEYS for k in keys)):
        raise ModelLoadError(f"{path}: 'config_keys' must be a non-empty list of config keys "
                             f"{list(CONFIG_KEYS)}, got {keys!r}")
    values = schema.get("config_values")
    if values is not None and not _config_values_ok(values, keys):
        raise ModelLoadError(f"{path}: 'config_values' must map each of config_keys {keys!r} "
                             f"to a non-empty list of integers, got {values!r}")
    per_family = schema.get("family_config_values")
    if per_family is not None and not _family_config_values_ok(per_family, fams, keys):
        raise ModelLoadError(f"{path}: 'family_config_values' must map each of 'families' "
                             f"{fams!r} to config keys of {keys!r} with non-empty lists of "
                             f"integers, got {per_family!r}")


def _config_values_ok(values, keys, exact: bool = True) -> bool:
    """Whether ``values`` maps the keys ``keys`` (``exact``: all of them, else some or
    none: a family whose configs have no keys) to non-empty lists of integers."""
    return (isinstance(values, dict)
            and (set(values) == set(keys) if exact else set(values) <= set(keys))
            and all(isinstance(v, list) and v
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
                    for v in values.values()))


def _family_config_values_ok(per_family, families, keys) -> bool:
    """Whether ``per_family`` maps exactly ``families`` to config values of some of
    ``keys`` (``_config_values_ok``)."""
    return (isinstance(per_family, dict) and set(per_family) == set(families)
            and all(_config_values_ok(v, keys, exact=False) for v in per_family.values()))


def load_model(path: str | os.PathLike) -> LoadedModel:
    """Load and verify a model directory; ModelLoadError names the file and the problem.

    model.txt and schema.json are required; meta.json (provenance) is optional, but
    when present it must be a JSON object whose model_sha256, if given, is model.txt's.
    """
    path = Path(path)
    if not path.is_dir():
        raise ModelLoadError(f"{path}: model directory not found")
    model = _load_verified(path)
    meta_path = path / META_FILE
    if meta_path.exists():  # provenance only: optional, but never corrupt or another model's
        meta = _read_json(meta_path)
        sha = meta.get("model_sha256", model.sha256)
        if sha != model.sha256:
            raise ModelLoadError(f"{meta_path}: model_sha256 {str(sha)[:12]!r} is not that of "
                                 f"{path / MODEL_FILE} ({model.identity}): the directory "
                                 "mixes files of different models")
        model.meta = meta
    return model


def _load_verified(path: Path) -> LoadedModel:
    """schema.json + model.txt, checked against each other and this code (no meta.json)."""
    schema_path, model_path = path / SCHEMA_FILE, path / MODEL_FILE
    schema = _read_json(schema_path)
    _check_schema(schema, schema_path)
    if not model_path.is_file():
        raise ModelLoadError(f"{model_path}: model file not found")
    sha = sha256_file(model_path)
    if sha != schema["model_sha256"]:
        raise ModelLoadError(f"{model_path}: sha256 {sha[:12]}... does not match "
                             f"{schema['model_sha256'][:12]}... recorded in {schema_path}: "
                             "the file is corrupt, truncated or was replaced")
    ensemble = load_ensemble(model_path)
    if ensemble.n_features != N_FEATURES:
        raise ModelLoadError(f"{model_path}: the model takes {ensemble.n_features} features, "
                             f"this code computes {N_FEATURES} (schema v{SCHEMA_VERSION})")
    if list(ensemble.feature_names) != list(FEATURE_NAMES):
        raise ModelLoadError(f"{model_path}: the model's feature names differ from "
                             f"FEATURE_NAMES (schema v{SCHEMA_VERSION})")
    gpu = schema["gpu"].get("name", "?") if isinstance(schema.get("gpu"), dict) else "?"
    guard, params = _load_guard(path, schema)
    return LoadedModel(path, sha, str(gpu), str(schema.get("method", "?")), schema, ensemble,
                       guard=guard, guard_params=params)


def _load_guard(path: Path, schema: dict) -> tuple[TreeEnsemble | None, GuardParams | None]:
    """The guard's ensemble and settings that schema.json records (None, None if none)."""
    g = schema.get("guard")
    if g is None:
        return None, None
    where = path / SCHEMA_FILE
    if not isinstance(g, dict) or g.get("model_file") != GUARD_FILE \
            or g.get("method") != GUARD_METHOD:
        raise ModelLoadError(f"{where}: 'guard' must name model_file {GUARD_FILE!r} and "
                             f"method {GUARD_METHOD!r}, got {g!r}")
    try:
        params = GuardParams(top_k=g.get("top_k"), max_log_slowdown=g.get("max_log_slowdown"))
        params.check(f"{where}: guard")
    except ValueError as e:
        raise ModelLoadError(str(e)) from None
    file = path / GUARD_FILE
    if not file.is_file():
        raise ModelLoadError(f"{file}: guard model file not found")
    sha = sha256_file(file)
    if sha != g.get("model_sha256"):
        raise ModelLoadError(f"{file}: sha256 {sha[:12]}... does not match the guard's "
                             f"recorded in {where}: the file is corrupt, truncated or was "
                             "replaced")
    ensemble = load_ensemble(file)
    if list(ensemble.feature_names) != list(FEATURE_NAMES):
        raise ModelLoadError(f"{file}: the guard's feature names differ from FEATURE_NAMES "
                             f"(schema v{SCHEMA_VERSION})")
    return ensemble, params


def write_json(path: Path, obj: dict) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)


def write_model_dir(out: str | os.PathLike, booster, method: str, device: DeviceSpec,
                    meta: dict, check_X: np.ndarray,
                    families: Sequence[str] | None = None,
                    guard: tuple[object, GuardParams] | None = None,
                    config_keys: Sequence[str] | None = None,
                    config_values: dict[str, Sequence[int]] | None = None,
                    family_config_values: dict[str, dict[str, Sequence[int]]] | None = None
                    ) -> dict:
    """Write model.txt (and guard.txt), schema.json, meta.json; verify the numpy
    evaluator against lightgbm.

    ``families``: the families in the training data, all of one direction (default:
    every forward family). ``guard``: (its booster, its settings), or None.
    ``config_keys``: the config keys in the training data (default: every key of
    ``CONFIG_KEYS``); ``config_values``: each one's values there, over every family's rows
    (its keys are then the config keys; None records none, and the model reads as having
    seen every value but NEW_SINCE_LEGACY_VALUES); ``family_config_values``: the same a
    family, over its rows (its keys the families; None records none). Returns the
    meta written (with the model's sha256, identity and the largest |tree_model -
    lightgbm| difference on ``check_X``). Raises RuntimeError when that exceeds 1e-6.
    Files are written model files first, then schema.json, meta.json, each
    atomically; load_model checks the sha256 that the JSON files record, so an
    interrupted write never loads.
    """
    from .train import METHODS

    info = METHODS[method]
    fams = sorted(set(families if families is not None else _families_of("forward")))
    unknown = [f for f in fams if f not in FAMILY_DIRECTION]
    if unknown or not fams:
        raise ValueError(f"families {fams} must be a non-empty subset of {list(FAMILY_DIRECTION)}")
    if config_values is not None:
        config_values = {k: sorted(set(vs)) if isinstance(vs, list | tuple) else vs
                         for k, vs in config_values.items()}
        if config_keys is not None and set(config_keys) != set(config_values):
            raise ValueError(f"config keys {sorted(config_keys)} and the keys of config values "
                             f"{sorted(config_values)} differ")
        config_keys = list(config_values)
    keys = sorted(set(config_keys if config_keys is not None else CONFIG_KEYS))
    if not keys or any(k not in CONFIG_KEYS for k in keys):
        raise ValueError(f"config keys {keys} must be a non-empty subset of {list(CONFIG_KEYS)}")
    if config_values is not None and not _config_values_ok(config_values, keys):
        raise ValueError(f"config values {config_values} must give each key a non-empty list "
                         "of integers")
    if family_config_values is not None:
        family_config_values = {f: {k: sorted(set(vs)) for k, vs in values.items()}
                                for f, values in family_config_values.items()}
        if not _family_config_values_ok(family_config_values, fams, keys):
            raise ValueError(f"family config values {family_config_values} must give each of "
                             f"the families {fams} config values of the keys {keys}")
    directions = sorted({FAMILY_DIRECTION[f] for f in fams})
    if len(directions) > 1:
        raise ValueError(f"families {fams} mix directions {directions}: one model a direction")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    boosters = [(MODEL_FILE, booster)] + ([(GUARD_FILE, guard[0])] if guard else [])
    for name, b in boosters:
        tmp = out / (name + ".tmp")
        b.save_model(str(tmp))
        os.replace(tmp, out / name)
    if guard is None and (out / GUARD_FILE).exists():
        (out / GUARD_FILE).unlink()  # a previous model's guard must not stay beside this one
    sha = sha256_file(out / MODEL_FILE)
    schema = {
        "schema_version": SCHEMA_VERSION, "feature_names": list(FEATURE_NAMES),
        "families": fams, "config_keys": keys,
        **({"config_values": config_values} if config_values is not None else {}),
        **({"family_config_values": family_config_values}
           if family_config_values is not None else {}),
        "direction": directions[0], "method": method,
        "score": {"transform": info.transform, "unit": info.unit},
        "model_file": MODEL_FILE, "model_sha256": sha,
        "gpu": {"name": device.name, "key": device.key, "capability": list(device.capability),
                "sm_count": device.sm_count},
    }
    if guard is not None:
        guard[1].check()
        schema["guard"] = {"model_file": GUARD_FILE, "method": GUARD_METHOD,
                           "model_sha256": sha256_file(out / GUARD_FILE),
                           "top_k": guard[1].top_k,
                           "max_log_slowdown": guard[1].max_log_slowdown}
    write_json(out / SCHEMA_FILE, schema)
    loaded = _load_verified(out)
    check_X = np.asarray(check_X, dtype=np.float32)
    pairs = [(loaded.ensemble, booster)] + ([(loaded.guard, guard[0])] if guard else [])
    diff = max(float(np.max(np.abs(ours.predict(check_X) - theirs.predict(check_X)),
                            initial=0.0)) for ours, theirs in pairs)
    if diff > 1e-6:
        raise RuntimeError(f"{out / MODEL_FILE}: numpy evaluator differs from lightgbm by "
                           f"{diff:.3g}; the model directory is not usable")
    meta = dict(meta, model_sha256=sha, identity=loaded.identity, families_trained=fams,
                tree_model_max_abs_diff=diff, gpu=schema["gpu"])
    write_json(out / META_FILE, meta)
    load_model(out)
    return meta


def _model_gpu(path: Path) -> dict | None:
    """The 'gpu' record of a model directory's schema.json, or None if unusable."""
    try:
        gpu = json.loads((path / SCHEMA_FILE).read_text()).get("gpu")
        cap = tuple(int(v) for v in gpu["capability"])
        sms = int(gpu.get("sm_count", 0))
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None
    return {"capability": cap, "sm_count": sms} if len(cap) == 2 else None


def find_model(gpu: str | DeviceSpec, nearest: bool = True,
               root: str | os.PathLike | None = None) -> Path | tuple[Path, str] | None:
    """Model directory for a GPU name or DeviceSpec: a Path (exact), (Path, warning)
    (nearest of the same architecture family) or None. See the module docstring.

    An exact directory is returned even when it is broken, so that loading it
    fails loudly instead of silently using another GPU's model.
    """
    if isinstance(gpu, DeviceSpec):
        name, key, cap, sms = gpu.name, gpu.key, tuple(gpu.capability), gpu.sm_count
    elif isinstance(gpu, str):
        if not gpu.strip():
            raise ValueError("gpu name is empty")
        name, key = gpu, device_key(gpu)
        spec = KNOWN.get(key)
        cap, sms = (tuple(spec.capability), spec.sm_count) if spec else (None, 0)
    else:
        raise TypeError(f"gpu must be a name or a DeviceSpec, got {type(gpu).__name__}")
    root = Path(root) if root is not None else MODELS_ROOT
    exact = root / key
    if exact.is_dir():
        return exact
    if not nearest or cap is None or not root.is_dir():
        return None
    options = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        info = _model_gpu(d)
        if info is None or info["capability"][0] != cap[0]:
            continue
        same_minor = info["capability"] == cap
        options.append((not same_minor, abs(info["sm_count"] - sms), d.name, d))
    if not options:
        return None
    best = min(options)[3]
    return best, (f"no model trained on {name} ({key}); using the one for {best.name}, the "
                  f"nearest GPU of the same architecture (sm_{cap[0]}x)")


__all__ = ["MODELS_ROOT", "LoadedModel", "ModelLoadError", "find_model", "load_model",
           "write_model_dir"]
