"""Print the requirements pyproject.toml declares, one per line: the dependencies, and with an
argument the packages of that optional extra too (`python scripts/requirements.py test`).
Lets .ci/run install what the tests need without building the package."""
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:                      # Python < 3.11
    import tomli as tomllib

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml")
                        .read_text(encoding="utf-8"))["project"]
extras = project.get("optional-dependencies", {})
for name in sys.argv[1:]:
    if name not in extras:
        sys.exit(f"pyproject.toml has no optional dependency group {name!r}")
print("\n".join(project["dependencies"] + [r for name in sys.argv[1:] for r in extras[name]]))
