"""topo's jar is built from a list of sources: every Java file of the package is on it."""

from importlib import resources

from topology.spark import topojar


def test_every_java_source_of_the_package_is_built() -> None:
    folder = resources.files("topology") / "resources" / "java" / topojar.PACKAGE
    present = {entry.name for entry in folder.iterdir() if entry.name.endswith(".java")}
    assert set(topojar.SOURCES) == present
    assert len(topojar.SOURCES) == len(present)
