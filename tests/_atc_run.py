"""What one ATC run left on the screen: the record every test harness returns (in-process
`atc_main`, the entries as processes, the fault probes)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AtcRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout + self.stderr
