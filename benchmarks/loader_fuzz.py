"""How long `topo validate` takes on nasty input: the bound tests/unit/test_loader_fuzz.py does not
assert (it only checks that every input ends in exit 0 or 1 with located errors).

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/loader_fuzz.py [--seed 7] [--limit 60]

Each input (deep nesting of every kind, files of a few MB, thousands of duplicate keys, NUL and
control characters, random bytes, aliases that expand) is written to a temporary file and given
to `topo validate` (a saved plan to `topo apply`) in a fresh process, as a user would. The table
shows its size, the exit code and the wall time in seconds, which includes the interpreter's
start (measured first, on a two-line file, and shown as `startup`); then the median and the
maximum over all inputs. An exit other than 0 or 1, or a Python traceback, is marked `BAD`.
"""

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 1_000_000
VALID_HEAD = (
    "version: 1\nclusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
    "flows:\n  - mirror: {from: east, to: west}\n"
)


def inputs(rng: random.Random) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """Name -> (command, the file's bytes), built lazily: some are megabytes."""

    def text(value: str) -> Callable[[], bytes]:
        return lambda: value.encode("utf-8", errors="surrogatepass")

    def random_bytes() -> bytes:
        return rng.randbytes(3 * MB)

    def random_yaml_ish() -> bytes:
        alphabet = "{}[]:,-?'\"#&*!|> \n\ta1"
        return "".join(rng.choice(alphabet) for _ in range(MB)).encode()

    block = "".join(" " * i + f"k{i}:\n" for i in range(2_000))
    return {
        "startup (two lines)": ("validate", text("version: 1\nclusters: {}\n")),
        "flow [ x 1,000": ("validate", text("a: " + "[" * 1_000 + "]" * 1_000)),
        "flow [ x 1,000,000 unclosed": ("validate", text("a: " + "[" * MB)),
        "flow {a: x 300,000": ("validate", text("{a: " * 300_000 + "1" + "}" * 300_000)),
        "block - x 1,000,000": ("validate", text("- " * MB + "x\n")),
        "block indent x 2,000 (4 MB)": ("validate", text(block)),
        "deep client: x 100,000": (
            "validate",
            text(VALID_HEAD.replace("'h:1'", "'h:1', client: {x: " + "[" * 100_000 + "}")),
        ),
        "saved plan [ x 1,000,000": (
            "apply",
            text('{"format_version": "1", "changes": [' + "[" * MB + "]" * MB + "]}"),
        ),
        "duplicate keys x 100,000": ("validate", text(VALID_HEAD + "name: a\n" * 100_000)),
        "unknown keys x 100,000": (
            "validate",
            text(VALID_HEAD + "".join(f"extra{i}: 1\n" for i in range(100_000))),
        ),
        "list of 300,000 under an unknown key": (
            "validate",
            text(VALID_HEAD + "extra: [" + ", ".join(["a"] * 300_000) + "]\n"),
        ),
        "NUL at the end of 3 MB": ("validate", text(VALID_HEAD + "# x\n" * 750_000 + "\x00")),
        "control characters x 100,000": (
            "validate",
            text(VALID_HEAD + "".join(f"k{i}: \x07\n" for i in range(100_000))),
        ),
        "one 5 MB line": ("validate", text(VALID_HEAD + "name: " + "x" * 5 * MB + "\n")),
        "one 5 MB unclosed quote": ("validate", text(VALID_HEAD + 'name: "' + "x" * 5 * MB)),
        "aliases expanding (billion laughs)": (
            "validate",
            text(
                "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                + "".join(
                    f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
                    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
                )
            ),
        ),
        "random bytes (3 MB)": ("validate", random_bytes),
        "random YAML-ish characters (1 MB)": ("validate", random_yaml_ish),
    }


def run(command: str, content: bytes, limit: float) -> tuple[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("plan.json" if command == "apply" else "topology.yaml")
        path.write_bytes(content)
        code = "from topology.cli import main; main()"
        start = time.perf_counter()
        try:
            result = subprocess.run(
                [sys.executable, "-c", code, command, str(path)],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=limit,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "TIMEOUT", limit
        took = time.perf_counter() - start
    bad = result.returncode not in (0, 1) or "Traceback" in result.stderr
    return f"{result.returncode}{' BAD' if bad else ''}", took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before giving up")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    times: list[float] = []
    print(f"{'input':40} {'size':>10} {'exit':>8} {'seconds':>8}")
    for name, (command, make) in inputs(rng).items():
        content = make()
        outcome, took = run(command, content, options.limit)
        times.append(took)
        print(f"{name:40} {len(content):>10,} {outcome:>8} {took:>8.2f}", flush=True)
    print(f"{'median':40} {'':>10} {'':>8} {statistics.median(times):>8.2f}")
    print(f"{'max':40} {'':>10} {'':>8} {max(times):>8.2f}")


if __name__ == "__main__":
    main()
