"""Two things a flow's checkpoint folder holds. The mark a flow that took over from MirrorMaker 2
leaves there: which handover (a digest of the positions it started from) it began with, so that
a new handover's positions win over those the copy loop committed before it, once, and the same
handover resumed (a driver restarted, `topo apply` after `--once`) goes on from the loop's own.
And the Spark checkpoint a flow left when it copied as micro-batches (before the copy loop was
topo's only engine): where its newest committed batch ended, where the loop goes on from. An old
Spark checkpoint without this handover's mark is moved aside at a handover, never deleted, so
that it is not read instead of MM2's positions. Only folders on this machine's disk are looked
at; in shared storage (`engine.checkpoints` on HDFS or S3), remove an old one by hand
(docs/mm2.md says when).
"""

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlparse

from topology.core.errors import TopoError
from topology.host import jobstate

MARK = "topo-handover.json"


def digest(starts: Mapping[str, Mapping[int, int]]) -> str:
    """The handover's name: the positions it starts from (topic -> partition -> offset)."""
    text = json.dumps(
        {t: {str(p): o for p, o in at.items()} for t, at in starts.items()},
        sort_keys=True,
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Marker:
    def __init__(self, checkpoint: str, handover: str) -> None:
        self.folder = _local(checkpoint)
        self.handover = handover

    def is_new(self) -> bool:
        """Whether this handover has not started here yet (no mark of it): its positions then
        win over any a copy loop committed before it. False off this machine's disk, where
        nothing is marked: the loop's own positions win there."""
        if self.folder is None:
            return False
        recorded = jobstate.read_json(self.folder / MARK)
        return not (isinstance(recorded, dict) and recorded.get("handover") == self.handover)

    def clear_older(self) -> Path | None:
        """Move aside a checkpoint that is not this handover's; where it went, or None."""
        if self.folder is None or not (self.folder / "offsets").is_dir():
            return None
        recorded = jobstate.read_json(self.folder / MARK)
        if isinstance(recorded, dict) and recorded.get("handover") == self.handover:
            return None
        aside = self.folder.with_name(f"{self.folder.name}.before-handover-{int(time.time())}")
        try:
            self.folder.rename(aside)
        except OSError as problem:
            raise TopoError(
                f"cannot move the checkpoint {self.folder} from before the handover aside "
                f"({problem}); move it yourself, or the flow would ignore MM2's positions"
            ) from None
        return aside

    def mark(self) -> None:
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            jobstate.write_json(self.folder / MARK, {"handover": self.handover})


def checkpoint_offsets(checkpoint: str) -> dict[str, dict[str, int]] | None:
    """Where a flow's Spark checkpoint (on this machine) says its newest committed batch ended:
    topic -> partition -> next offset; None without one. Read when the flow moves to the copy
    loop, which keeps its positions in Kafka: it goes on from there, not from the start.
    (`spark/loop.py` reads one in shared storage through Hadoop, with the two below.)"""
    folder = _local(checkpoint)
    if folder is None:
        return None
    try:
        newest = newest_batch(done.name for done in (folder / "commits").iterdir())
        if newest is None:
            return None
        return batch_ends((folder / "offsets" / str(newest)).read_text("utf-8"))
    except OSError:
        return None  # none here: the flow starts where its spec says


def newest_batch(names: Iterable[str]) -> int | None:
    """The newest batch a checkpoint's `commits` folder (these file names) says finished."""
    batches = [int(name) for name in names if name.isdigit()]
    return max(batches) if batches else None


def batch_ends(text: str) -> dict[str, dict[str, int]] | None:
    """A batch's end offsets from its file in `offsets` (a version line, the batch's metadata,
    then one line per source, topo's micro-batches having had one); None when it is not that."""
    try:
        ended = json.loads(text.splitlines()[2])
        return {str(t): {str(int(p)): int(o) for p, o in at.items()} for t, at in ended.items()}
    except (ValueError, IndexError, AttributeError, TypeError):
        return None  # not one topo wrote: the flow starts where its spec says


def _local(checkpoint: str) -> Path | None:
    parsed = urlparse(checkpoint)
    if parsed.scheme == "":
        return Path(checkpoint)
    if parsed.scheme == "file":
        return Path(parsed.path)
    return None
