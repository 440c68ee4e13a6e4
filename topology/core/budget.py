"""Work the analysis may do, counted in steps, with a budget that grows with the file.

A small file must not buy an exponential amount of work: an identity mesh of seven clusters
(1.6 KB) has 13,692 replication chains, and comparing them pairwise is millions of steps. The
search (`reach`) and the checks (`checks`) each take their steps from one `Steps`; past the
budget they stop and say so (T309), so `validate`, `graph`, `diff` and `export mm2` answer in
time near linear in the file's size whatever the graph. Nothing here reads a clock: the bound
is on work counted, the same on every machine.
"""

from dataclasses import dataclass

# What any file may spend, however small: room for every chain of a mesh of nine clusters.
BASE_STEPS = 300_000
# And this much more per byte of the file, so a large topology is analysed in full.
STEPS_PER_BYTE = 4


@dataclass
class Steps:
    """A step counter with a budget: `take` counts, `spent` says whether the budget is gone."""

    budget: int
    taken: int = 0

    @classmethod
    def for_text(cls, text: str) -> "Steps":
        return cls(BASE_STEPS + STEPS_PER_BYTE * len(text))

    @classmethod
    def default(cls) -> "Steps":
        return cls(BASE_STEPS)

    def take(self, count: int = 1) -> bool:
        """Count `count` steps; False once the budget is spent (the caller stops)."""
        self.taken += count
        return self.taken <= self.budget

    @property
    def spent(self) -> bool:
        return self.taken > self.budget

    @property
    def left(self) -> int:
        return max(self.budget - self.taken, 0)
