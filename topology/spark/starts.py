"""Where each flow's copy starts: the location of its Spark checkpoint (of a flow that copied as
micro-batches before the loop, read once), and for a flow taking over from MirrorMaker 2 the
positions MM2 stopped at (the jobs document's starts; `spark/resumed.py` keeps the mark that
tells whether a handover has begun here)."""

from collections.abc import Callable, Mapping
from pathlib import Path

from topology.core.mm2.positions import starting_offsets
from topology.core.model import Topology
from topology.host import jobstate
from topology.spark import resumed

Offsets = dict[str, dict[str, int]]  # topic -> partition (as text) -> offset, as Spark reads them


def checkpoint_location(topology: Topology, folder: Path, slug: str) -> str:
    """Where a flow's Spark checkpoint lives: under `engine.checkpoints` (any Hadoop URI, one
    folder per topology and flow), else in the driver's state folder on this machine."""
    base = topology.engine.checkpoints
    if base is None:
        return str(folder / jobstate.CHECKPOINTS / slug)
    return f"{base.rstrip('/')}/{topology.name}/{slug}"


class Handovers:
    """The flows that start where MM2 stopped, and which of them start so in this driver."""

    def __init__(
        self, starts: Mapping[str, Mapping[str, Mapping[int, int]]], report: Callable[..., None]
    ) -> None:
        self.starts = starts
        self.report = report
        self.new: set[str] = set()  # handovers that begin here: their positions win

    def starting(self, flow: str, checkpoint: str, counts: Mapping[str, int]) -> Offsets | None:
        """Where a flow taking over from MM2 starts each partition of the topics in `counts`
        (Spark's startingOffsets shape); None
        for any other flow. A local checkpoint older than the handover is moved aside first:
        resumed from, it would ignore MM2's positions."""
        resume = self.starts.get(flow)
        if not resume:
            return None
        handover = resumed.Marker(checkpoint, resumed.digest(resume))
        if handover.is_new():
            self.new.add(flow)
        moved = handover.clear_older()
        if moved is not None:
            self.report(
                f"{flow}: moved its checkpoint from before the handover to {moved}; it "
                "starts where MirrorMaker 2 stopped",
                level="warning",
            )
        handover.mark()
        return starting_offsets(resume, counts)

    def begins(self, flow: str) -> bool:
        """Whether the flow's handover begins now (once: its positions win over a copy loop's
        own from before it)."""
        began = flow in self.new
        self.new.discard(flow)
        return began
