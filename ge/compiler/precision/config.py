"""Everything the dtype stage reads besides the mode: the mixed-precision lists after
--modify_mixlist, the --keep_dtype and --customize_dtypes files, and the implementation-mode
choice (--op_precision_mode, else --op_select_implmode / --optypelist_for_implmode)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from ge.errors import warn
from ge.ops.defs._common import FUSED_ACTIVATION
from ge.ops.precision import IMPL_MODE_OPS, MIXLIST

from . import files, modes

__all__ = ["PrecisionConfig", "read_config", "OPT_KEEP_DTYPE", "OPT_MODIFY_MIXLIST",
           "OPT_CUSTOMIZE_DTYPES", "OPT_OP_PRECISION_MODE", "OPT_IMPLMODE", "OPT_IMPLMODE_LIST",
           "WARN_UNMATCHED"]

OPT_KEEP_DTYPE = "keep_dtype"
OPT_MODIFY_MIXLIST = "ge.exec.modify_mixlist"
OPT_CUSTOMIZE_DTYPES = "ge.customizeDtypes"
OPT_OP_PRECISION_MODE = "ge.exec.op_precision_mode"
OPT_IMPLMODE = "ge.opSelectImplmode"
OPT_IMPLMODE_LIST = "ge.optypelistForImplmode"
OPT_WEIGHT_CLIP = "ge.is_weight_clip"
WARN_UNMATCHED = "WP0250"
_DEFAULT_IMPL = "high_performance"


@dataclass
class PrecisionConfig:
    lists: dict = field(default_factory=lambda: dict(MIXLIST))
    keep: tuple = ()                 # files.OpSelector
    custom: tuple = ()               # files.CustomDtype
    impl_by_type: dict = field(default_factory=dict)    # op type -> mode name
    impl_by_name: dict = field(default_factory=dict)    # node name -> mode name
    impl_all: str = ""               # *_for_all: every op
    files: dict = field(default_factory=dict)           # option -> path, for warnings
    weight_clip: bool = True         # --is_weight_clip (ge.is_weight_clip), default 1

    def keeps(self, node) -> bool:
        return any(s.matches(node) for s in self.keep)

    def custom_for(self, node) -> Optional[files.CustomDtype]:
        by_name = [c for c in self.custom if c.selector.op_name and c.selector.matches(node)]
        by_type = [c for c in self.custom if c.selector.op_type and c.selector.matches(node)]
        return (by_name or by_type or [None])[0]     # a name line wins over a type line

    def impl_mode_for(self, node) -> Optional[int]:
        """The node's mode; a matrix op with a fused activation (ATTR fused_activation) takes
        the activation's mode when it has none of its own (its kernel computes both)."""
        mode = (self.impl_by_name.get(node.name) or self.impl_by_type.get(node.type)
                or self.impl_all or self.impl_by_type.get(node.attr(FUSED_ACTIVATION) or ""))
        return files.IMPL_MODES[mode] if mode else None

    def warn_unmatched(self, graphs) -> None:
        nodes = [n for g in graphs for n in g.nodes]
        for option, selectors in (("keep_dtype", self.keep),
                                  ("customize_dtypes", tuple(c.selector for c in self.custom))):
            missing = [s.text for s in selectors if not any(s.matches(n) for n in nodes)]
            if missing:
                warn(WARN_UNMATCHED, {"parameter": option, "file": self.files.get(option, ""),
                                      "lines": ", ".join(missing)})


def read_config(options: Mapping[str, str], policy: modes.Policy) -> PrecisionConfig:
    cfg = PrecisionConfig()
    path = (options.get(OPT_MODIFY_MIXLIST) or "").strip()
    if path and policy.rule == modes.MIXED:
        cfg.lists.update(files.read_modify_mixlist(path))
    path = (options.get(OPT_KEEP_DTYPE) or "").strip()
    if path:
        cfg.keep = files.read_keep_dtype(path).selectors
        cfg.files["keep_dtype"] = path
    path = (options.get(OPT_CUSTOMIZE_DTYPES) or "").strip()
    if path:
        cfg.custom = files.read_customize_dtypes(path)
        cfg.files["customize_dtypes"] = path
    _read_impl_modes(options, cfg)
    cfg.weight_clip = (options.get(OPT_WEIGHT_CLIP) or "1").strip() != "0"
    return cfg


def _read_impl_modes(options: Mapping[str, str], cfg: PrecisionConfig) -> None:
    """--op_precision_mode wins; else --op_select_implmode over --optypelist_for_implmode
    (or over the ops that have variants, IMPL_MODE_OPS); the default high_performance is not
    recorded (no attribute = high_performance)."""
    path = (options.get(OPT_OP_PRECISION_MODE) or "").strip()
    if path:
        cfg.impl_by_type, cfg.impl_by_name = files.read_op_precision_mode(path)
        return
    mode = (options.get(OPT_IMPLMODE) or "").strip() or _DEFAULT_IMPL
    listed = [t.strip() for t in (options.get(OPT_IMPLMODE_LIST) or "").split(",") if t.strip()]
    if mode.endswith("_for_all"):
        cfg.impl_all = mode[:-len("_for_all")]
    elif listed:
        cfg.impl_by_type = {t: mode for t in listed}
    elif mode != _DEFAULT_IMPL:
        cfg.impl_by_type = {t: mode for t in sorted(IMPL_MODE_OPS)}
