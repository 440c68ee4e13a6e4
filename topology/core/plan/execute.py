"""Apply: run a plan's changes in its order and account for every one of them.

This module decides nothing about *what* to change (the plan did) and does no I/O itself: the
caller passes the function that executes one change against its cluster, and the guard
(`topology.core.plan.guard`) that must accept the whole plan before the first change runs. It keeps
going on the other clusters when one fails, skips the rest of a failed cluster's changes (they
may depend on the one that failed), and reports exactly what was done, what failed and what
was not tried, so a partial apply can be understood and a re-run converges.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from topology.core.errors import TopoError
from topology.core.plan.values import Change, Plan


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


def run(
    plan: Plan,
    execute: Callable[[Change], None],
    *,
    guard: Callable[[Plan], None] | None = None,
    on_start: Listener = lambda number, total, change: None,
    on_done: Callable[[Step], None] = lambda step: None,
    clock: Callable[[], float] = time.monotonic,
) -> Report:
    """Execute every change of `plan` in order. A KeyboardInterrupt stops the run; the report
    then marks the interrupted change and every later one as not attempted.

    `guard` sees the whole plan first; the TopoError it raises for a change it refuses stops
    the run there, with nothing executed (it propagates: no report, nothing was attempted)."""
    if guard is not None:
        guard(plan)
    total = len(plan.changes)
    report = Report(total)
    failed_clusters: dict[str, str] = {}
    for number, change in enumerate(plan.changes, start=1):
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
                report.interrupted = True
                report.steps.append(
                    Step(
                        number,
                        change,
                        Outcome.NOT_ATTEMPTED,
                        "interrupted while it ran; it "
                        "may be partly done (a re-run plans what is missing)",
                    )
                )
                _not_attempted(report, plan, number + 1, "interrupted before it started")
                return report
            else:
                step = Step(number, change, Outcome.DONE, "", clock() - started)
        report.steps.append(step)
        on_done(step)
    return report


def _not_attempted(report: Report, plan: Plan, start: int, why: str) -> None:
    for number, change in enumerate(plan.changes[start - 1 :], start=start):
        report.steps.append(Step(number, change, Outcome.NOT_ATTEMPTED, why))
