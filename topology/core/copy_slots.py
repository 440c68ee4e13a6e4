"""How many copy slots each flow runs as (docs/engine.md, Copy slots): the flow's `tasks` when
it states one (MirrorMaker 2's `tasks.max`), else sized from its source partitions and the
cores Spark offers. A busy slot keeps about one core busy, so more slots than cores copy no
faster; on a cluster each slot holds an executor's core for as long as it runs. The cores left
after the stated counts are shared among the other flows in proportion to their partitions
(D'Hondt's method): each gets one at least, and no more than its partitions (or two, room for
topics that come later). The driver sizes its flows once, as it starts them; `topo plan` says
the same count from the partitions it sees."""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from topology.core import naming
from topology.core.model import Engine

# A local master of a stated count of task slots: local[4].
LOCAL_COUNT = re.compile(r"local\[(\d+)\]")
MOST = 256  # slots a flow is sized to at most, as many as `tasks` may state


@dataclass(frozen=True)
class Wanted:
    """A flow as its slots are sized: its `tasks` (None: sized) and its source partitions."""

    tasks: int | None
    partitions: int


def sized(wanted: Mapping[str, Wanted], cores: int) -> dict[str, int]:
    """Each flow's copy slots: its stated `tasks`, or its share of the `cores` the stated
    counts leave (at least one, at most its partitions or `naming.LOOP_TASKS`, and `MOST`)."""
    counts = {flow: w.tasks for flow, w in wanted.items() if w.tasks is not None}
    free = sorted(flow for flow, w in wanted.items() if w.tasks is None)
    spare = cores - sum(counts.values()) - len(free)
    given = dict.fromkeys(free, 1)
    while spare > 0:
        growable = [f for f in free if given[f] < _most(wanted[f].partitions)]
        if not growable:
            break
        # the flow with the most partitions per slot; the first name breaks a tie
        flow = max(growable, key=lambda f: (wanted[f].partitions / given[f], -free.index(f)))
        given[flow] += 1
        spare -= 1
    return counts | given


def said(wanted: Wanted, count: int | None, cores: int | None) -> str:
    """`2 copy slots sized from 600 partitions and 2 cores`, `4 copy slots` when `tasks`
    states it; `count` None: the cores are learnt when the driver starts."""
    partitions = f"{wanted.partitions} partition{'s' if wanted.partitions != 1 else ''}"
    if count is None:
        return f"copy slots sized at start from {partitions} and the cores Spark offers"
    slots = f"{count} copy slot{'s' if count != 1 else ''}"
    if wanted.tasks is not None:
        return slots
    return f"{slots} sized from {partitions} and {cores} core{'s' if cores != 1 else ''}"


def _most(partitions: int) -> int:
    return min(MOST, max(partitions, naming.LOOP_TASKS))


def stated_cores(engine: Engine) -> int | None:
    """The cores the topology's Spark settings give the application on a cluster:
    `spark.cores.max`, else the executors times `spark.executor.cores` (`spark.executor.instances`,
    or with dynamic allocation its `maxExecutors`); None when they do not say."""
    conf = engine.spark_conf
    most = _whole(conf.get("spark.cores.max"))
    if most is not None:
        return most
    dynamic = conf.get("spark.dynamicAllocation.enabled", "").strip().lower() == "true"
    key = "spark.dynamicAllocation.maxExecutors" if dynamic else "spark.executor.instances"
    executors, each = _whole(conf.get(key)), _whole(conf.get("spark.executor.cores"))
    return executors * each if executors is not None and each is not None else None


def local_cores(master: str, machine: int) -> int:
    """The cores a local master offers the copy slots: the machine's, or fewer when the
    topology states a smaller `local[N]`."""
    stated = LOCAL_COUNT.fullmatch(master.strip())
    return max(1, min(machine, int(stated.group(1))) if stated else machine)


def offered(engine: Engine, machine: int) -> int | None:
    """The cores the flows' slots are sized for, as far as the topology and this machine
    tell: None for a cluster whose size only its running application learns."""
    if engine.runner in ("local", "none") or engine.master.strip().startswith("local"):
        return local_cores(engine.master, machine)
    return stated_cores(engine)


def _whole(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None
