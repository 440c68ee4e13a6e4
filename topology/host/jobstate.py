"""Where a topology's replication jobs keep their state on this machine, and reading it.

One folder per topology (named by its owner name) under `paths.state_dir()`:

    driver.json    what runs here: pids (`topo run`, spark-submit, the driver program), mode,
                   runner, the jobs document's digest and each job's spec
    jobs.json      the jobs document the driver runs (`topo run` writes it)
    driver.log     the background supervisor's, the driver's and Spark's output
    checkpoints/   Spark checkpoints, one folder per edge (unless `engine.checkpoints` puts
                   them elsewhere); they survive restarts and crashes

What other machines need (the jobs, the lease, the status, stop requests) is in
`topo-runs.internal` on the home cluster (topology/core/runstate.py); these files are this
machine's own.

The files are small JSON documents, replaced atomically, so a reader never sees half of one.
"""

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from topology.host import paths
from topology.lab.process import is_zombie

DRIVER = "driver.json"
LOG = "driver.log"
CHECKPOINTS = "checkpoints"


@dataclass(frozen=True)
class Driver:
    launcher_pid: int  # `topo run`, the supervisor; or spark-submit for a --once copy
    driver_pid: int | None  # the Python driver program, once it has started
    mode: str  # continuous | once
    runner: str  # local | spark
    master: str
    base: str  # the folder relative `${file:...}` references are read from
    jobs_digest: str  # the jobs document it runs (`JobsDocument.digest`)
    started_at: float
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # flow -> JobSpec.to_dict()
    submit_pid: int | None = None  # spark-submit, the leader of the driver's process group


def folder(owner: str) -> Path:
    return paths.state_dir() / owner


def checkpoint(owner: str, slug: str) -> Path:
    return folder(owner) / CHECKPOINTS / slug


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}")
    staged.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(staged, path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_driver(owner: str, driver: Driver) -> None:
    write_json(folder(owner) / DRIVER, asdict(driver))


def recorded_driver(owner: str) -> Driver | None:
    return driver_in(folder(owner) / DRIVER)


def driver_in(file: Path) -> Driver | None:
    """The driver a driver.json records (in any state folder), or None."""
    data = read_json(file)
    if not isinstance(data, dict):
        return None
    try:
        return Driver(**data)
    except TypeError:
        return None


def running_driver(owner: str) -> Driver | None:
    """The recorded driver if its supervisor is still alive (it restarts a crashed driver)."""
    driver = recorded_driver(owner)
    if driver is None or not alive(driver.launcher_pid):
        return None
    return driver


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not is_zombie(pid)
