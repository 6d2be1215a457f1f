"""The fuzz probe of issue #19: random hostile inputs, each judged by what a user would see.

Three generators over one seed (`cases.py`), each case reproducible from (seed, category,
index) alone:
  om      mutations of a compiled OM: bit flips per region, truncations, header field edits,
          checksum edits, and edits resealed with a fresh checksum (as a tool could write)
  model   truncations, bit flips and field edits of a small ONNX model
  flags   ATC command lines built from the flag table `ge/atc/flags.py`: valid and invalid
          values, unknown flags, duplicates, odd characters, empty values, files of the wrong
          kind, outputs over existing files

`verdict.py` judges one run (exit status, coded error, traceback, time, files changed, partial
outputs, outputs of an accepted OM against the unmutated one); `worker.py` runs a batch of cases
in a child process and survives its crashes and hangs.  Used by tests/reliability/test_fuzz.py
(fixed seed, bounded counts) and bench/fuzz_probe.py (any seed and count, the table of
docs/reliability.md).
"""
