"""Resolve a set of Maven artifacts into topo's cache with the machine's own `mvn`.

Each set is a POM shipped as package data (`resources/maven/<name>.xml`). Its jars land in
`<cache>/jars/<name>-<digest of the POM>/lib`, so editing the POM resolves afresh while an
unchanged one costs nothing on the next run. Maven is used exactly as configured on the
machine (its settings and mirrors); topo never names a repository.
"""

import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from topology.core.errors import ToolMissingError, TopoError
from topology.host import paths

# Pinned so the copy behaves the same whatever Maven version the machine has.
COPY_GOAL = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"
COMPLETE_MARKER = ".complete"


def pom_text(artifact_set: str) -> str:
    """The POM of a named artifact set, read from package data."""
    pom = resources.files("topology") / "resources" / "maven" / f"{artifact_set}.xml"
    if not pom.is_file():
        raise TopoError(f"unknown artifact set {artifact_set!r}")
    return pom.read_text(encoding="utf-8")


def resolved_dir(artifact_set: str) -> Path:
    """Where the jars of this set live once resolved (whether or not they are there yet)."""
    digest = hashlib.sha256(pom_text(artifact_set).encode()).hexdigest()[:12]
    return paths.jars_dir() / f"{artifact_set}-{digest}"


def resolve(artifact_set: str, report: Callable[[str], None] | None = None) -> list[Path]:
    """The jars of `artifact_set`, resolving them with mvn on first use."""
    target = resolved_dir(artifact_set)
    if not (target / COMPLETE_MARKER).exists():
        if report:
            report(f"resolving {artifact_set} jars with mvn into {target} (first run only)")
        _resolve_into(artifact_set, target)
    return sorted((target / "lib").glob("*.jar"))


def _resolve_into(artifact_set: str, target: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ToolMissingError(
            f"Maven (mvn) is needed to fetch the {artifact_set} jars but is not on PATH; "
            "install Maven 3.6+ and run again"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Resolve into a scratch folder beside the target and rename it into place at the end,
    # so an interrupted or concurrent run never leaves a half-filled folder that looks done.
    scratch = Path(tempfile.mkdtemp(prefix=f".{artifact_set}-", dir=target.parent))
    try:
        (scratch / "pom.xml").write_text(pom_text(artifact_set), encoding="utf-8")
        log = scratch / "mvn.log"
        with log.open("w") as out:
            done = subprocess.run(
                [
                    mvn,
                    "-B",
                    "-f",
                    str(scratch / "pom.xml"),
                    COPY_GOAL,
                    f"-DoutputDirectory={scratch / 'lib'}",
                    "-DincludeScope=runtime",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=scratch,
                check=False,
            )
        if done.returncode != 0:
            kept = target.parent / f"{artifact_set}-mvn-failure.log"
            shutil.copyfile(log, kept)
            raise TopoError(
                f"mvn could not resolve the {artifact_set} jars: {_first_error(log)} (log: {kept})"
            )
        (scratch / COMPLETE_MARKER).touch()
        try:
            scratch.rename(target)
        except OSError:
            if not (target / COMPLETE_MARKER).exists():  # not a concurrent winner: a real error
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


def _first_error(log: Path) -> str:
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("[ERROR]") and line[7:].strip():
            return line[7:].strip()[:300]
    return f"mvn failed (see {log})"


def _main(argv: list[str]) -> int:
    """`python -m topology.host.maven SET...`: resolve artifact sets ahead of time (make setup)."""
    try:
        for artifact_set in argv:
            jars = resolve(artifact_set, report=lambda line: print(line, file=sys.stderr))
            print(f"{artifact_set}: {len(jars)} jars in {resolved_dir(artifact_set)}")
    except TopoError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
