"""The dispatcher: torch-style API, registry, choosers, decision cache and explain()."""

from .api import CACHE, clear_cache, conv2d, conv3d, decide
from .choosers import RuleChooser
from .decision import Decision
from .explain import Explanation, explain
from .fallback import FallbackWarning
from .launch import run_candidate
from .modules import Conv2d, Conv3d
from .replace import replace_convs
from .selection import set_chooser
from .settings import force, set_strict

__all__ = ["CACHE", "Conv2d", "Conv3d", "Decision", "Explanation", "FallbackWarning",
           "RuleChooser", "clear_cache", "conv2d", "conv3d", "decide", "explain", "force",
           "replace_convs", "run_candidate", "set_chooser", "set_strict"]
