"""Helpers of the install tests: the stand-in ATC flow, a subprocess runner, output checks."""
from __future__ import annotations

import json
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Dict, List, Optional

STUB_ATC = textwrap.dedent('''
    import json, os, sys, time

    def main_impl(argv):
        record = {
            "argv": [os.fsencode(a).hex() for a in argv],
            "executable": sys.executable,
            "version": list(sys.version_info[:2]),
            "marker": None,
        }
        try:
            import pyatc_test_marker
            record["marker"] = pyatc_test_marker.NAME
        except ImportError:
            pass
        ready = os.environ.get("STUB_READY")
        if ready:
            try:
                with open(ready, "w") as f:
                    f.write("ready")
                while True:
                    time.sleep(0.05)
            except KeyboardInterrupt:
                record["interrupted"] = True
                with open(os.environ["STUB_OUT"], "w") as f:
                    json.dump(record, f)
                return -1
        with open(os.environ["STUB_OUT"], "w") as f:
            json.dump(record, f)
        return int(os.environ.get("STUB_RC", "0"))
''')


def write_stub_flow(root: Path, real_ge_dirs: List[str]) -> Path:
    ge_dir = root / "ge"
    (ge_dir / "atc").mkdir(parents=True)
    (ge_dir / "__init__.py").write_text(f"__path__.extend({real_ge_dirs!r})\n")
    (ge_dir / "atc" / "__init__.py").write_text(STUB_ATC)
    return root


def run(argv: List[str], env: Dict[str, str], cwd: Path,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=str(cwd), capture_output=True, timeout=timeout)


def read_record(path: Path) -> Optional[dict]:
    return json.loads(path.read_text()) if path.exists() else None


PROGRAM_NAMES = re.compile(r"([\w./-]*python[0-9.]* -m ge\.pyatc|\bpyatc\b|\batc\b)")


ERROR_STAMP = re.compile(r"\[PID: \d+\] \S+")


def normalise_program_name(text: str) -> str:
    """Replaces the entry's program name (spec/atc-cli.md §1.1) with <prog> and the
    `[PID: n] <time>` stamp of error headlines, the two things entries may differ in."""
    return ERROR_STAMP.sub("[PID] <time>", PROGRAM_NAMES.sub("<prog>", text))
