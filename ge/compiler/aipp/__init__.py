"""AIPP (`--insert_op_conf`): the configuration file (config) and its insertion into the graph
during graph preparation (insert).  The op itself is ge.ops.defs.aipp; docs/aipp.md."""
from .config import AippConfig, read_config
from .insert import insert_aipp

__all__ = ["AippConfig", "read_config", "insert_aipp"]
