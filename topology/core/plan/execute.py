"""Apply: run a plan's changes in its order and account for every one of them.

This module decides nothing about *what* to change (the plan did) and does no I/O itself: the
caller passes the function that executes one change against its cluster, and the guard
(`topology.core.plan.guard`) that must accept the whole plan before the first change runs. It keeps
going on the other clusters when one fails, skips the rest of a failed cluster's changes (they
may depend on the one that failed), and reports exactly what was done, what failed and what
was not tried, so a partial apply can be understood and a re-run converges.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from topology.core.errors import TopoError
from topology.core.plan.values import Action, Change, Plan, Resource

# Topic creations carried out in one request at most (each one still its own step).
TOGETHER_MOST = 200
_INTERRUPTED = "interrupted while it ran; it may be partly done (a re-run plans what is missing)"


class Outcome(StrEnum):
    DONE = "done"
    FAILED = "failed"
    NOT_ATTEMPTED = "not attempted"


@dataclass(frozen=True)
class Step:
    number: int  # 1-based, in plan order
    change: Change
    outcome: Outcome
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Report:
    total: int
    steps: list[Step] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(s.outcome is Outcome.DONE for s in self.steps)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for step in self.steps if step.outcome is outcome)


def describe(change: Change) -> str:
    """One line naming a change: `west: create topic east.orders`."""
    resource = change.resource.replace("_", " ")
    return f"{change.cluster}: {change.action} {resource} {change.name}"


Listener = Callable[[int, int, Change], None]
# Changes carried out at once: for each, None (done) or the one line saying why it failed.
RunTogether = Callable[[Sequence[Change]], Sequence[str | None]]


def joins(change: Change, first: Change) -> bool:
    """Whether `change` may be carried out in one request with `first` and those between them:
    both create a topic on the same cluster. Such creations depend on nothing but the state
    topic, whose own creation (purpose `state`) therefore runs alone, before them."""
    return change.cluster == first.cluster and _creates_topic(change) and _creates_topic(first)


def _creates_topic(change: Change) -> bool:
    return (
        change.action is Action.CREATE
        and change.resource is Resource.TOPIC
        and (change.after or {}).get("purpose") != "state"
    )


def together(changes: Sequence[Change], start: int) -> int:
    """How many changes from `start` on go in one request (1: the change runs alone)."""
    end = start + 1
    while (
        end < len(changes) and end - start < TOGETHER_MOST and joins(changes[end], changes[start])
    ):
        end += 1
    return end - start


def run(
    plan: Plan,
    execute: Callable[[Change], None],
    *,
    guard: Callable[[Plan], None] | None = None,
    on_start: Listener = lambda number, total, change: None,
    on_done: Callable[[Step], None] = lambda step: None,
    clock: Callable[[], float] = time.monotonic,
    run_together: RunTogether | None = None,
) -> Report:
    """Execute every change of `plan` in order. A KeyboardInterrupt stops the run; the report
    then marks the interrupted change and every later one as not attempted.

    `guard` sees the whole plan first; the TopoError it raises for a change it refuses stops
    the run there, with nothing executed (it propagates: no report, nothing was attempted).

    With `run_together`, consecutive topic creations on one cluster (`together`) are carried
    out by one call of it; each is still its own step, done or failed on its own, reported
    once the call returns."""
    if guard is not None:
        guard(plan)
    total = len(plan.changes)
    report = Report(total)
    failed_clusters: dict[str, str] = {}
    index = 0
    while index < total:
        change, number = plan.changes[index], index + 1
        count = together(plan.changes, index) if run_together is not None else 1
        if count > 1 and change.cluster not in failed_clusters and run_together is not None:
            if not _run_together(plan, index, count, run_together, report, failed_clusters, clock):
                return report
            for step in report.steps[index:]:
                on_start(step.number, total, step.change)
                on_done(step)
            index += count
            continue
        index += 1
        if change.cluster in failed_clusters:
            step = Step(
                number,
                change,
                Outcome.NOT_ATTEMPTED,
                f"an earlier change on {change.cluster} failed",
            )
        else:
            on_start(number, total, change)
            started = clock()
            try:
                execute(change)
            except TopoError as problem:
                failed_clusters[change.cluster] = str(problem)
                step = Step(number, change, Outcome.FAILED, str(problem), clock() - started)
            except KeyboardInterrupt:
                _interrupted(report, plan, number, number)
                return report
            else:
                step = Step(number, change, Outcome.DONE, "", clock() - started)
        report.steps.append(step)
        on_done(step)
    return report


def _run_together(
    plan: Plan,
    index: int,
    count: int,
    run_together: RunTogether,
    report: Report,
    failed_clusters: dict[str, str],
    clock: Callable[[], float],
) -> bool:
    """The `count` changes from `index` on, by one call; False when it was interrupted (the
    report then holds every step, the rest not attempted)."""
    changes = plan.changes[index : index + count]
    started = clock()
    try:
        outcomes = run_together(changes)
    except TopoError as failure:  # none of them could be tried (the cluster did not answer)
        outcomes = [str(failure)] * count
    except KeyboardInterrupt:
        _interrupted(report, plan, index + 1, index + count)
        return False
    seconds = clock() - started
    with_others = f"{count} created in one request"
    for number, (change, why) in enumerate(zip(changes, outcomes, strict=True), index + 1):
        if why is None:
            report.steps.append(Step(number, change, Outcome.DONE, with_others, seconds))
        else:
            failed_clusters.setdefault(change.cluster, why)
            report.steps.append(Step(number, change, Outcome.FAILED, why, seconds))
    return True


def _interrupted(report: Report, plan: Plan, first: int, last: int) -> None:
    """Ctrl-C while changes `first` to `last` (1-based) ran: they may be partly done; the
    rest were not started."""
    report.interrupted = True
    for number in range(first, last + 1):
        change = plan.changes[number - 1]
        report.steps.append(Step(number, change, Outcome.NOT_ATTEMPTED, _INTERRUPTED))
    _not_attempted(report, plan, last + 1, "interrupted before it started")


def _not_attempted(report: Report, plan: Plan, start: int, why: str) -> None:
    for number, change in enumerate(plan.changes[start - 1 :], start=start):
        report.steps.append(Step(number, change, Outcome.NOT_ATTEMPTED, why))
