"""The front end in one call: text -> document -> schema -> topology -> graph -> checks.

Each stage runs only when the one before it left something to work on, and every stage's
diagnostics are kept, so one run reports every problem in the file.
"""

from dataclasses import dataclass

from topology.core import checks, collector, reach, resolve, schema, source
from topology.core import flow_graph as graph
from topology.core.budget import Steps
from topology.core.diagnostics import (
    ERROR_LIMIT,
    Diagnostic,
    error_count,
    has_errors,
    in_file_order,
    warning,
)
from topology.core.flow_graph import TopologyGraph
from topology.core.model import Topology
from topology.core.reach import Reach
from topology.core.source import Document


@dataclass(frozen=True)
class Analysis:
    """Everything topo knows about a topology file before it talks to a cluster."""

    document: Document
    diagnostics: tuple[Diagnostic, ...]
    topology: Topology | None = None
    graph: TopologyGraph | None = None
    reach: Reach | None = None
    steps: Steps | None = None  # the work the graph, the search and the checks did, counted

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


# Problems after which the data still has the shape resolve expects: extra keys are ignored,
# and a flow without a kind is left out.
_SHAPE_KEEPING = {"T002", "T101", "T105"}


def analyse(text: str, file: str) -> Analysis:
    with collector.paused():  # a large file is millions of objects, none of them garbage
        return _analyse(text, file)


def _stopped(document: Document, errors: int) -> Diagnostic:
    """The file has ERROR_LIMIT errors or more in its shape: its values are not checked."""
    return warning(
        "T309",
        f"stopped after {errors:,} errors in the file's shape (at {ERROR_LIMIT} the analysis "
        "stops): the clusters' and flows' values and the replication graph are not checked; "
        "fix these and validate again",
        document.span(()),
    )


def _analyse(text: str, file: str) -> Analysis:
    document, found = source.parse(text, file)
    if document.data is None and found:  # a syntax error: there is nothing to look at
        return Analysis(document, tuple(found))
    found += schema.check(document)
    if any(d.code not in _SHAPE_KEEPING for d in found):
        return Analysis(document, tuple(in_file_order(found)))
    errors = error_count(found)
    if errors >= ERROR_LIMIT:
        return Analysis(document, tuple(in_file_order([*found, _stopped(document, errors)])))
    topology, resolved = resolve.resolve(document, errors)
    found += resolved
    if any(d.code == "T309" for d in resolved):  # the file's errors stopped it
        return Analysis(document, tuple(in_file_order(found)), topology)
    steps = Steps.for_text(text)  # one budget for the graph, the search and the checks
    topology_graph, structural = graph.build(topology, steps)
    found += structural
    ordered = tuple(in_file_order(found))
    if any(d.code == "T310" for d in structural):  # no edge was built: nothing to follow
        return Analysis(document, ordered, topology, steps=steps)
    reached = reach.reach(topology_graph, steps=steps)
    found += checks.check(topology_graph, reached, steps)
    ordered = tuple(in_file_order(found))
    return Analysis(document, ordered, topology, topology_graph, reached, steps)
