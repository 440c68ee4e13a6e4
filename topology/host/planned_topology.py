"""The topology file a saved plan was made from, found on this machine: where it was named
when planning (from the folder planning ran in), or next to the saved plan, whichever has the
plan's SHA-256. Nothing of a file is read but its size unless it is a regular file no larger
than any topology, so a plan naming a device, a FIFO or a huge file is one line, not a hang."""

import hashlib
import os
import stat

from topology.core.errors import StalePlanError, TopoError
from topology.core.plan.values import Plan

# No topology is this large; a saved plan naming a bigger file is refused before reading it all.
MAX_TOPOLOGY_BYTES = 256 * 1024 * 1024


def matching(plan: Plan, plan_file: str) -> tuple[str, bytes]:
    """The topology file whose bytes have the plan's SHA-256, and those bytes. It is looked
    for where `first_place` says, then at the other place it may be (a different file of the
    same name in the working folder does not hide the right one next to the plan). When none
    matches, the first place's problem is the one reported: changed, missing, unreadable."""
    first = first_place(plan, plan_file)
    problem: TopoError | None = None
    for path in [first, *(p for p in _candidates(plan, plan_file) if p != first)]:
        try:
            data = _read_bytes(path, plan, plan_file)
        except TopoError as why:
            problem = problem or why
            continue
        if hashlib.sha256(data).hexdigest() == plan.topology_sha256:
            return path, data
        problem = problem or StalePlanError(
            f"stale plan: {plan.topology_file} changed after {plan_file} was made; plan again"
        )
    assert problem is not None  # there is always a first place
    raise problem


def _read_bytes(path: str, plan: Plan, plan_file: str) -> bytes:
    """The file's bytes; a missing, unreadable, special (a FIFO, a device) or oversized file is
    one line, and nothing of it is read but its size. An unreadable path is not repeated: it
    is the plan's to say, and could be anything (too long, not text)."""
    from topology.core.plan.saved import SavedPlanError

    named = plan.topology_file
    try:
        # Non-blocking: opening a FIFO would otherwise wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise StalePlanError(
            f"stale plan: {named}, the topology {plan_file} was made from, is not there; plan again"
        ) from None
    except OSError as problem:
        raise SavedPlanError(
            f"{plan_file}: cannot read the topology file it names ({problem.strerror or problem})"
        ) from None
    except ValueError:  # a NUL, or no encoding for it on this system (UnicodeEncodeError)
        raise SavedPlanError(
            f"{plan_file}: its topology.file is not a path this system can open"
        ) from None
    facts = os.fstat(descriptor)
    if not stat.S_ISREG(facts.st_mode):  # asked before fdopen, which raises on a folder
        os.close(descriptor)
        raise TopoError(f"{named}: not a regular file, so not the topology {plan_file} names")
    with os.fdopen(descriptor, "rb") as handle:
        if facts.st_size > MAX_TOPOLOGY_BYTES:
            raise StalePlanError(
                f"stale plan: {named} changed after {plan_file} was made (it is larger than any "
                "topology); plan again"
            )
        try:
            return handle.read(MAX_TOPOLOGY_BYTES + 1)
        except OSError as problem:
            raise SavedPlanError(
                f"{plan_file}: cannot read the topology file it names "
                f"({problem.strerror or problem})"
            ) from None


def _candidates(plan: Plan, plan_file: str) -> list[str]:
    """Where the plan's topology may be: as it was named when planning (from the folder
    planning ran in), and, for a relative name, next to the saved plan."""
    named = plan.topology_file
    if os.path.isabs(named):
        return [named]
    beside = os.path.join(os.path.dirname(plan_file), named)
    return [named] if os.path.normpath(beside) == os.path.normpath(named) else [named, beside]


def first_place(plan: Plan, plan_file: str) -> str:
    """Where the topology is looked for first: the first of `_candidates` that exists, else
    its name as planned. (`os.path.exists` says no, rather than raising, for a path the system
    cannot even look up.)"""
    return next(
        (path for path in _candidates(plan, plan_file) if os.path.exists(path)),
        plan.topology_file,
    )
