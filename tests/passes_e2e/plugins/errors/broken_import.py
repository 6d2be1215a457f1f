"""A plugin that cannot be imported: pyatc must fail with E13029 naming this file."""
import e2e_module_that_does_not_exist  # noqa: F401
