"""`topo reset`: a paused flow's positions moved, its reads and its commit injected.

Only a paused flow's positions move: one whose copy slots run would commit over them. So a
reset is refused unless the topology file pauses the flow and, while a driver holds the lease,
the jobs it runs pause it too and its own status says the flow is paused (its slots stopped,
their positions committed). With no driver running nothing copies, and the next one starts the
flow from the positions the reset left.
"""

from collections.abc import Mapping
from typing import Protocol

from topology.core import naming, reset
from topology.core.jobs import JobsFormatError, JobSpec, read_document
from topology.core.runstate import Book, FlowState
from topology.ops.runs import lease_live


class SourceEnds(Protocol):
    """What the reset reads of the flow's source partitions."""

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        """The partition's first offset and its end."""
        ...

    def offset_at(self, topic: str, partition: int, ms: int) -> int | None:
        """The first offset whose timestamp is at or after `ms` (None: no record that new)."""
        ...


class ProgressGroup(Protocol):
    """The flow's progress group on its target: read, and committed to."""

    def offsets(self, group: str) -> dict[tuple[str, int], int]: ...

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None: ...


def not_paused(spec: JobSpec, file: str) -> str | None:
    """Why the topology file does not allow the reset (None: it pauses the flow)."""
    if spec.paused:
        return None
    return (
        f"flow {spec.flow} is not paused in {file}: set `paused: true` on it and `topo apply` "
        "it, then reset (a running copy would commit over the reset)"
    )


def refusal(book: Book | None, owner: str, spec: JobSpec, file: str, now: float) -> str | None:
    """Why the flow's positions may not move now (None: they may), the file and the run state
    (`book`, None when there is none) judged."""
    flow = spec.flow
    if not spec.paused:
        return not_paused(spec, file)
    if book is None or not lease_live(book, owner, now) or book.stop_applies(owner):
        return None  # no driver runs: nothing copies
    jobs = book.jobs(owner)
    try:
        published = read_document(jobs.value) if jobs is not None else None
    except JobsFormatError:
        published = None
    running = {s.flow: s for s in published.specs} if published is not None else {}
    if flow in running and not running[flow].paused:
        return (
            f"the running driver still copies {flow}: `topo apply {file}` first (its plan "
            "pauses the flow), then reset"
        )
    status = book.status(owner)
    said = status.value if status is not None else {}
    if published is not None and said.get("jobs_published_at") != published.published_at:
        return "the driver has not reported on the jobs published last yet; try again shortly"
    states = {str(f.get("flow")): f.get("state") for f in said.get("flows", [])}
    if flow in running and states.get(flow) != FlowState.PAUSED:
        return (
            f"the driver has not paused {flow} yet (it reports it {states.get(flow, 'unknown')}); "
            "try again once `topo status` shows it paused"
        )
    return None


def plan(
    spec: JobSpec,
    owner: str,
    partitions: Mapping[str, tuple[str, int]],
    to: reset.To,
    source: SourceEnds,
    target: ProgressGroup,
) -> reset.Reset:
    """The reset of the flow's `partitions` (source topic -> its name on the target and its
    partition count): each one's position now, and where it goes."""
    group = naming.progress_group(owner, spec.slug)
    committed = target.offsets(group)
    seen = []
    for topic, (remote, count) in partitions.items():
        for partition in range(count):
            start, end = source.bounds(topic, partition)
            at_time = None
            if to.kind == "time" and to.value is not None:
                at_time = source.offset_at(topic, partition, to.value)
            seen.append(
                reset.Seen(
                    topic,
                    remote,
                    partition,
                    committed.get((remote, partition)),
                    start,
                    end,
                    at_time,
                )
            )
    return reset.reset(
        spec.flow, spec.delivery, spec.target, group, to, seen, spec.start == "latest"
    )


def commit(planned: reset.Reset, target: ProgressGroup) -> int:
    """Commit the positions that change; how many."""
    changed = planned.changed()
    if changed:
        target.commit(planned.group, changed)
    return len(changed)
