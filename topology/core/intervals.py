"""How often the running driver does each of its periodic chores: MirrorMaker 2's interval
settings, by MM2's names (`engine.intervals`), with topo's defaults.

topo's driver does each chore once for every flow, so an interval is the driver's, not a
flow's. Two of MM2's settings name one of topo's chores each: configs and ACLs are followed in
one look (`sync.topic.configs` and `sync.topic.acls`), and checkpoints and group offsets in one
round (`emit.checkpoints` and `sync.group.offsets`): that chore runs at the shorter of the two.
"""

from collections.abc import Mapping
from dataclasses import dataclass

HEARTBEATS = "emit.heartbeats.interval.seconds"
TOPICS = "refresh.topics.interval.seconds"
CONFIGS = "sync.topic.configs.interval.seconds"
ACLS = "sync.topic.acls.interval.seconds"
CHECKPOINTS = "emit.checkpoints.interval.seconds"
GROUP_OFFSETS = "sync.group.offsets.interval.seconds"

# topo's defaults (MM2's: 1, 600, 600, 600, 60, 60). topo looks at the sources' topics far
# more often than MM2, so a topic created on a source is copied within seconds.
DEFAULTS: Mapping[str, float] = {
    HEARTBEATS: 1.0,
    TOPICS: 2.0,
    CONFIGS: 10.0,
    ACLS: 10.0,
    CHECKPOINTS: 10.0,
    GROUP_OFFSETS: 10.0,
}
# A config and ACL look that changes nothing, and an offset round that finds nothing new, waits
# longer, up to this many times its interval (at topo's defaults, MM2's 60 s for the rounds).
BACKOFF = 6
# At topo's defaults the config and ACL look backs off further, to MM2's own interval for it:
# it describes every topic's configs on every cluster, the largest part of an idle driver's
# work, and a change of a quiet source's configs or ACLs then waits at most as long as under
# MM2. A stated interval backs off to BACKOFF times itself.
FOLLOW_LONGEST = 600.0


@dataclass(frozen=True)
class Chores:
    """Seconds between the driver's turns at each chore."""

    beat: float  # heartbeats written
    watch: float  # the sources' topics and partition counts looked at
    follow: float  # configs and ACLs followed ...
    follow_longest: float  # ... backing off to this while a look changes nothing
    offsets: float  # checkpoints written and group offsets synced ...
    offsets_longest: float  # ... backing off to this while a round finds nothing new


def of(given: Mapping[str, float]) -> Chores:
    """The chores' intervals from the settings `given` (the rest topo's defaults)."""
    every = {**DEFAULTS, **given}
    follow = min(every[CONFIGS], every[ACLS])
    offsets = min(every[CHECKPOINTS], every[GROUP_OFFSETS])
    stated = CONFIGS in given or ACLS in given
    return Chores(
        beat=every[HEARTBEATS],
        watch=every[TOPICS],
        follow=follow,
        follow_longest=follow * BACKOFF if stated else max(follow * BACKOFF, FOLLOW_LONGEST),
        offsets=offsets,
        offsets_longest=offsets * BACKOFF,
    )
