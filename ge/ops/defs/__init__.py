"""Importing this package registers every IR op (one module per family)."""
from . import structural, matmul, conv, elementwise, activation  # noqa: F401
from . import norm, pool_reduce, shape, misc  # noqa: F401
from . import detection  # noqa: F401
from . import aipp  # noqa: F401
from . import recurrent  # noqa: F401
from . import quant  # noqa: F401
