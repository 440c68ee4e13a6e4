"""The sink's timestamp interceptor: a one-class jar compiled from package data on first use.

Spark 4.1's Kafka sink has no timestamp column, so the producer would stamp copies with its
own clock. The query appends the source timestamp as a header and this interceptor, running in
the sink's producer, moves it into the record's timestamp (docs/engine.md). It is compiled
with the machine's JDK against the connector's kafka-clients jar and cached by source digest,
like the Maven jars.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from topology import paths
from topology.errors import ToolMissingError, TopoError

SOURCE = "dev/topo/replication/SourceTimestampInterceptor.java"
JAR = "topo-interceptor.jar"


def _source_text() -> str:
    return (resources.files("topology") / "resources" / "java" / SOURCE).read_text("utf-8")


def interceptor_jar(classpath: Sequence[Path]) -> Path:
    """The compiled jar; `classpath` must hold kafka-clients."""
    text = _source_text()
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    target = paths.jars_dir() / f"topo-interceptor-{digest}" / JAR
    if not target.exists():
        _build(text, classpath, target)
    return target


def _jdk_tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / name) if home else shutil.which(name)
    if not candidate or not Path(candidate).exists():
        raise ToolMissingError(
            f"a JDK's `{name}` is needed once to build topo's timestamp interceptor but was not "
            "found (JAVA_HOME or PATH); install a JDK 17+"
        )
    return candidate


def _build(text: str, classpath: Sequence[Path], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="topo-interceptor-") as scratch:
        source = Path(scratch) / "src" / SOURCE
        source.parent.mkdir(parents=True)
        source.write_text(text, encoding="utf-8")
        classes = Path(scratch) / "classes"
        cp = os.pathsep.join(str(p) for p in classpath)
        _run([_jdk_tool("javac"), "--release", "11", "-cp", cp, "-d", str(classes), str(source)])
        built = Path(scratch) / JAR
        _run([_jdk_tool("jar"), "cf", str(built), "-C", str(classes), "."])
        # Copied beside the target, then renamed: a concurrent build never leaves half a jar.
        staged = target.with_name(f".{JAR}.{os.getpid()}")
        shutil.copyfile(built, staged)
        os.replace(staged, target)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TopoError(f"building the timestamp interceptor failed: {last[0]}")
