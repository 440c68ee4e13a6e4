"""topo's own Java classes, in one jar compiled from package data on first use.

The copy loop (docs/engine.md): `CopyLoop` (one flow's leader in the driver: the assignment,
moves and fencing, its reports), `LoopConfig` (its configuration, parsed and checked in one
place), `Slot`, `SlotJobs`, `SlotPlugin` and `SlotWire` (copy slots as Spark tasks, and how they
talk to the leader), `CopyTask` (a slot's copy: a consumer feeding a producer), `Hops` (the loop
rules and stamps), `Ledger` (the positions in the progress group), `LoopFigures` (the figures),
`Rebalance` (which partition moves), `RecordFilter` and `SqlFilter` (a flow's record filter,
compiled by Spark's expression engine); `TopicShapes` (the running driver's frequent look at a
cluster's topics and partition counts) and `AdminLooks` (its metrics' looks at the topics' ids
and the partitions' ends).

They are compiled with the machine's JDK against the connector's kafka-clients jar and
pyspark's own jars, and cached by the sources' digest, like the Maven jars.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from topology.core.errors import ToolMissingError, TopoError
from topology.host import paths

PACKAGE = "dev/topo/replication"
SOURCES = (
    "Hops.java",
    "LoopFigures.java",
    "LoopConfig.java",
    "Ledger.java",
    "CopyTask.java",
    "RecordFilter.java",
    "SlotHost.java",
    "SlotWire.java",
    "Slot.java",
    "Launcher.java",
    "Rebalance.java",
    "CopyLoop.java",
    "SlotPlugin.java",
    "SlotJobs.java",
    "SqlFilter.java",
    "TopicShapes.java",
    "AdminLooks.java",
)
JAR = "topo-classes.jar"


def _source_texts() -> dict[str, str]:
    folder = resources.files("topology") / "resources" / "java" / PACKAGE
    return {name: (folder / name).read_text("utf-8") for name in SOURCES}


def pyspark_jars() -> list[Path]:
    """The jars pyspark ships (Spark core and SQL, Scala), which the slots' Spark side
    (`SlotJobs`, `SlotPlugin`, `SqlFilter`) is compiled against."""
    from pyspark.find_spark_home import _find_spark_home

    return sorted((Path(_find_spark_home()) / "jars").glob("*.jar"))  # type: ignore[no-untyped-call]


def topo_jar(classpath: Sequence[Path]) -> Path:
    """The compiled jar; `classpath` must hold kafka-clients (pyspark's jars are added). Cached
    by the sources and the names of the jars compiled against (their versions): a new pyspark
    or connector gets a jar built for it."""
    texts = _source_texts()
    against = [*classpath, *pyspark_jars()]
    what = [*(texts[name] for name in SOURCES), *sorted(jar.name for jar in against)]
    digest = hashlib.sha256("\0".join(what).encode()).hexdigest()[:12]
    target = paths.jars_dir() / f"topo-classes-{digest}" / JAR
    if not target.exists():
        _build(texts, against, target)
    return target


def jdk_tool(name: str) -> str:
    """A JDK tool (`javac`, `jar`, `java`): JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / name) if home else shutil.which(name)
    if not candidate or not Path(candidate).exists():
        raise ToolMissingError(
            f"a JDK's `{name}` is needed once to build topo's Java classes but was not "
            "found (JAVA_HOME or PATH); install a JDK 17+"
        )
    return candidate


def _build(texts: dict[str, str], classpath: Sequence[Path], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="topo-classes-") as scratch:
        sources = []
        for name, text in texts.items():
            source = Path(scratch) / "src" / PACKAGE / name
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text(text, encoding="utf-8")
            sources.append(str(source))
        classes = Path(scratch) / "classes"
        cp = os.pathsep.join(str(p) for p in classpath)
        _run([jdk_tool("javac"), "--release", "17", "-cp", cp, "-d", str(classes), *sources])
        built = Path(scratch) / JAR
        _run([jdk_tool("jar"), "cf", str(built), "-C", str(classes), "."])
        # Copied beside the target, then renamed: a concurrent build never leaves half a jar.
        staged = target.with_name(f".{JAR}.{os.getpid()}")
        shutil.copyfile(built, staged)
        os.replace(staged, target)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TopoError(f"building topo's Java classes failed: {last[0]}")
