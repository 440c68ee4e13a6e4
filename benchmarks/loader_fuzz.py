"""How long `topo validate` takes on nasty input: the bound tests/unit/test_loader_fuzz.py does not
assert (it only checks that every input ends in exit 0 or 1 with located errors).

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/loader_fuzz.py [--seed 7] [--limit 60] [--repeat 3] [--only TEXT]

Each input (deep nesting of every kind, files of a few MB, thousands of duplicate keys, NUL and
control characters, random bytes, aliases that expand; and issue 36's families: identity meshes
whose chains explode, large lists of clusters and aliases, a large saved plan, a secret file
that never ends, a topology without flows, and files with one problem in each of thousands of
places) is written to a temporary file and given to the
command it names (`topo validate` unless said; `diff` compares the file with itself) in a fresh
process, as a user would. The table
shows its size, the exit code and the wall time in seconds, which includes the interpreter's
start (measured first, on a two-line file, and shown as `startup`); then the median and the
maximum over all inputs. An exit other than 0 or 1, or a Python traceback, is marked `BAD`.
"""

import argparse
import copy
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
        **issue_36(text),
    }


def _text(value: str) -> Callable[[], bytes]:
    return lambda: value.encode("utf-8")


def _mirrors(size: int, pairs: list[tuple[int, int]]) -> str:
    lines = ["version: 1", "defaults: {naming: identity}", "clusters:"]
    lines += [f"  c{n}: {{bootstrap: '127.0.0.1:{19000 + n}'}}" for n in range(size)]
    return "\n".join(
        [*lines, "flows:", *(f"  - mirror: {{from: c{i}, to: c{j}}}" for i, j in pairs)]
    )


def _every_pair(size: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(size) for j in range(size) if i != j]


def _forward(size: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(size) for j in range(size) if i < j]


def _large_saved_plan() -> bytes:
    """A correctly fingerprinted saved plan of 12,000 topic creations (5.6 MB): refused as
    stale (its topology is not beside it), after every check of the plan itself."""
    sys.path.insert(0, str(ROOT))
    from tests.unit.test_saved_plan import document
    from topology.core.plan.values import fingerprint_of

    data = document()
    [create] = [c for c in data["changes"] if c["resource"] == "topic"][:1]
    data["changes"] = []
    for number in range(12_000):
        change = copy.deepcopy(create)
        change["name"] = f"east.t{number:06d}"
        data["changes"].append(change)
    data["fingerprint"] = fingerprint_of(data)
    return json.dumps(data, indent=2).encode()


def issue_36(
    text: Callable[[str], Callable[[], bytes]],
) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """The families of issue 36 (adversarial inputs that hung, crashed or misreported)."""
    mesh7, forward12 = _mirrors(7, _every_pair(7)), _mirrors(12, _forward(12))
    members = {n: ", ".join(f"u{i}" for i in range(n)) for n in (2_000, 10_000)}
    defined = "".join(f"  k{i}: {{bootstrap: 'h:{i + 1}'}}\n" for i in range(2_000))
    head = "version: 1\nclusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
    aliases = ", ".join(["*a"] * 100_000)
    secret = (
        "version: 1\nclusters:\n  east: {bootstrap: '127.0.0.1:1', security: {protocol: "
        "SASL_PLAINTEXT, sasl: {mechanism: PLAIN, username: u, password: '${file:/dev/zero}'}}}\n"
        "  west: {bootstrap: '127.0.0.1:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    return {
        "identity mirrors, 7 clusters each way": ("validate", text(mesh7)),
        "the same, topo graph": ("graph", text(mesh7)),
        "the same, topo diff": ("diff", text(mesh7)),
        "the same, topo export mm2": ("export mm2", text(mesh7)),
        "identity mirrors, 12 clusters forward": ("validate", text(forward12)),
        "active-active of 2,000 undefined": (
            "validate",
            text(head + f"flows:\n  - active-active: [{members[2_000]}]\n"),
        ),
        "active-active of 10,000 undefined": (
            "validate",
            text(head + f"flows:\n  - active-active: [{members[10_000]}]\n"),
        ),
        "active-active of 2,000 defined": (
            "validate",
            text(
                f"version: 1\nclusters:\n{defined}flows:\n  - active-active: "
                f"[{', '.join(f'k{i}' for i in range(2_000))}]\n"
            ),
        ),
        "100,000 aliases in an include list": (
            "validate",
            text(
                head.replace("version: 1\n", "version: 1\ndescription: &a orders\n")
                + "flows:\n  - mirror: {from: east, to: west}\n"
                + f"    topics: {{include: [{aliases}]}}\n"
            ),
        ),
        "saved plan of 12,000 changes": ("apply", _large_saved_plan),
        "password ${file:/dev/zero}": ("plan", text(secret)),
        "export mm2 of flows: []": (
            "export mm2",
            text("version: 1\nclusters:\n  east: {bootstrap: 'h:1'}\nflows: []\n"),
        ),
        **many_problems(text),
    }


def many_problems(
    text: Callable[[str], Callable[[], bytes]],
) -> dict[str, tuple[str, Callable[[], bytes]]]:
    """Files of 0.7 to 1.9 MB with one problem in each of thousands of places: each a
    diagnostic of its own, none counted in another as duplicate or unknown keys are."""
    wrong_type = "version: 1\nclusters:\n" + "".join(f"  c{i}: 5\n" for i in range(100_000))
    clusters = "".join(f"  c{i}: {{bootstrap: 'h:{i + 1}', x: 1}}\n" for i in range(50_000))
    malformed = "".join(f"  c{i}: {{bootstrap: 'nope'}}\n" for i in range(50_000))
    undefined = "".join(f"  - mirror: {{from: east, to: u{i}}}\n" for i in range(20_000))
    return {
        "100,000 clusters of the wrong type": ("validate", text(wrong_type + "flows: []\n")),
        "the same, --format json": ("validate --format json", text(wrong_type + "flows: []\n")),
        "50,000 clusters with an unknown key": (
            "validate",
            text(f"version: 1\nclusters:\n{clusters}flows: []\n"),
        ),
        "50,000 malformed bootstraps": (
            "validate",
            text(f"version: 1\nclusters:\n{malformed}flows: []\n"),
        ),
        "20,000 flows to undefined clusters": (
            "validate",
            text(f"version: 1\nclusters:\n  east: {{bootstrap: 'h:1'}}\nflows:\n{undefined}"),
        ),
    }


def run(command: str, content: bytes, limit: float) -> tuple[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("plan.json" if command == "apply" else "topology.yaml")
        path.write_bytes(content)
        code = "from topology.cli import main; main()"
        arguments = [*command.split(), str(path)] + ([str(path)] if command == "diff" else [])
        start = time.perf_counter()
        try:
            result = subprocess.run(
                [sys.executable, "-c", code, *arguments],
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
    parser.add_argument("--issue-36", action="store_true", help="only issue 36's families")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each input; the table shows the fastest"
    )
    parser.add_argument("--only", help="only the inputs whose name holds this text")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    times: list[float] = []
    print(f"{'input':40} {'size':>10} {'exit':>8} {'seconds':>8}")
    chosen = inputs(rng)
    if options.issue_36:
        chosen = {"startup (two lines)": chosen["startup (two lines)"], **issue_36(_text)}
    if options.only:
        chosen = {name: made for name, made in chosen.items() if options.only in name}
    for name, (command, make) in chosen.items():
        content = make()
        runs = [run(command, content, options.limit) for _ in range(max(1, options.repeat))]
        outcome, took = min(runs, key=lambda each: each[1])
        times.append(took)
        print(f"{name:40} {len(content):>10,} {outcome:>8} {took:>8.2f}", flush=True)
    print(f"{'median':40} {'':>10} {'':>8} {statistics.median(times):>8.2f}")
    print(f"{'max':40} {'':>10} {'':>8} {max(times):>8.2f}")


if __name__ == "__main__":
    main()
