"""How long `topo import mm2` takes on big or hostile mm2.properties files.

Run by hand, never from the test suite:

    .venv/bin/python benchmarks/import_large.py [--runs 3] [--only NAME]

Each file is generated into a temporary folder: one 10 MB line (a topic list of 1,000,000
names, one 10 MB value, one 10 MB key), 200,000 lines (unknown properties, or a topic list
continued over 200,000 lines), and a line of 2,000,000 escaped backslashes. The stages are
timed in-process (best and median of `--runs`, milliseconds, each run after a garbage
collection): reading the properties, the whole import (properties -> topology data and
diagnostics), writing the YAML, and `analyse` of that YAML (the check `topo import mm2` runs
before it says the import passes). Then the command itself runs once, in a fresh process, and
its wall time and the bytes it printed are shown. `tests/unit/test_mm2_import_large.py` holds
the same inputs as regression tests, without timings.
"""

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from topology.core.analysis import analyse
from topology.core.mm2 import properties, yaml_out
from topology.core.mm2.import_header import header
from topology.core.mm2.importer import import_properties

FLOW = (
    "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\n"
    "a->b.enabled = true\n"
)
MB10 = 10_000_000


def inputs() -> dict[str, str]:
    topics = ", ".join(f"topic{i}" for i in range(1_000_000))
    return {
        "10 MB line: 1,000,000 topics": FLOW + f"a->b.topics = {topics}\n",
        "10 MB line: one client value": FLOW + "a.client.rack = " + "x" * MB10 + "\n",
        "10 MB line: one unknown key": FLOW + "k" * MB10 + " = 1\n",
        "200,000 unknown properties": FLOW
        + "".join(f"a->b.unknown.setting{i} = {i}\n" for i in range(200_000)),
        "200,000 continuation lines": FLOW
        + "a->b.topics = t0"
        + "".join(f", \\\n    t{i}" for i in range(1, 200_000))
        + "\n",
        "2,000,000 escaped backslashes": FLOW + "a.client.rack = " + "\\\\" * 2_000_000 + "\n",
    }


def timed(runs: int, work: Callable[[], Any]) -> tuple[float, float, Any]:
    times, result = [], None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = work()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="run only the inputs whose name contains this")
    args = parser.parse_args()
    print(
        f"{'input':32} {'MB':>5} {'read':>13} {'import':>13} {'yaml':>13} {'analyse':>13}"
        f" {'topo import mm2':>16} {'printed':>9}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name, text in inputs().items():
            if args.only and args.only not in name:
                continue
            row = [f"{name:32}", f"{len(text) / 1e6:5.1f}"]
            best, median, _ = timed(args.runs, lambda t=text: properties.parse(t))
            row.append(f"{best:6.0f}/{median:6.0f}")
            best, median, result = timed(
                args.runs, lambda t=text: import_properties(t, "mm2.properties")
            )
            row.append(f"{best:6.0f}/{median:6.0f}")
            if result.data is None:
                row += ["-", "-"]
            else:
                best, median, yaml = timed(
                    args.runs,
                    lambda r=result: yaml_out.render(r.data, header(r, "mm2.properties")),
                )
                row.append(f"{best:6.0f}/{median:6.0f}")
                best, median, _ = timed(args.runs, lambda y=yaml: analyse(y, "imported.yaml"))
                row.append(f"{best:6.0f}/{median:6.0f}")
            file = Path(folder) / "mm2.properties"
            file.write_text(text)
            start = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "from topology.cli import main; main()",
                    "import",
                    "mm2",
                    str(file),
                ],
                capture_output=True,
                check=False,
            )
            wall = time.perf_counter() - start
            printed = len(done.stdout) + len(done.stderr)
            row += [f"{wall:9.1f} s (exit {done.returncode})", f"{printed / 1e6:6.1f} MB"]
            print(" ".join(f"{cell:>13}" if i > 1 else cell for i, cell in enumerate(row)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
