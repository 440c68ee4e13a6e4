"""Is the replication engine installed? pyspark is an extra (`topo[spark]`), so a lean install
(CI, pre-commit, a reviewer's laptop) can validate, diff, plan and apply cluster resources.

Asked without importing pyspark, which takes seconds and is exactly what a lean install lacks.
"""

import importlib.util

from topology.core.errors import TopoError

EXTRA = "spark"
INSTALL = f"pip install 'topo[{EXTRA}]'"


class EngineMissingError(TopoError):
    """A command needs the replication engine and pyspark is not installed."""


def present() -> bool:
    return importlib.util.find_spec("pyspark") is not None


def require(what: str, then: str = "") -> None:
    """Refuse `what` (e.g. "starting replication") with the one line that fixes it; `then`
    adds what else the user can do."""
    if not present():
        raise EngineMissingError(
            f"{what} needs topo's replication engine (pyspark), which is not installed "
            f"here: {INSTALL}{then}"
        )
