"""The ATC main flow (placeholder until the command-line contract lands)."""


def main_impl(argv: list[str]) -> int:
    print("ATC start working now, please wait for a moment.", flush=True)
    return -1
