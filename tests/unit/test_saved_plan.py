"""Saved plans are tamper-evident: what `saved.read` refuses, and `topo apply PLAN.json` end to
end with the clusters recorded (tests/plan/orphans-deleted) instead of read from Kafka.

The attacker of these tests can write the plan file (a CI artifact, a shared folder) but not
the topology or the clusters; they may even recompute the fingerprint, since
`model.fingerprint_of` is public. Then the comparison with a fresh plan and the guard refuse.
"""

import copy
import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from topology.core.analysis import analyse
from topology.core.jobs import job_views
from topology.core.observed import Acl, Cluster, Topic, cluster_from_dict
from topology.core.plan import saved
from topology.core.plan.planner import plan as make_plan
from topology.core.plan.values import (
    FINGERPRINTED,
    FORMAT_VERSION,
    Note,
    NoteLevel,
    Plan,
    fingerprint_of,
)

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests/plan/orphans-deleted"
# The recorded case's topology, without replication jobs (nothing here may start Spark), and
# copying clicks too, which east has and west lacks.
TOPOLOGY = (CASE / "topology.yaml").read_text().replace(
    '["orders"]', '["orders", "clicks"]'
) + "engine: {runner: none}\n"
EDITED = (
    "plan.json: the plan was edited after `topo plan` wrote it (its fingerprint does not match "
    "its content); plan again"
)
PAYROLL = Topic("payroll", 3, 1, {})
CLICKS = Topic("clicks", 2, 1, {"retention.ms": "3600000"})
EVIL = Acl("TOPIC", "east.orders", "LITERAL", "User:evil", "*", "ALL", "ALLOW")


def observed() -> dict[str, Cluster]:
    """The recorded clusters, with clicks on east and a topic topo does not own on west:
    payroll."""
    recorded = json.loads((CASE / "observed.json").read_text())
    clusters = {data["name"]: cluster_from_dict(data) for data in recorded["clusters"]}
    east, west = clusters["east"], clusters["west"]
    clusters["east"] = dataclasses.replace(east, topics={**east.topics, "clicks": CLICKS})
    clusters["west"] = dataclasses.replace(west, topics={**west.topics, "payroll": PAYROLL})
    return clusters


def planned(allow_delete: bool = True) -> Plan:
    analysis = analyse(TOPOLOGY, "topology.yaml")
    assert analysis.topology is not None, analysis.diagnostics
    digest = hashlib.sha256(TOPOLOGY.encode()).hexdigest()
    return make_plan(
        analysis.topology,
        observed(),
        topology_sha256=digest,
        allow_delete=allow_delete,
        topo_version="test",
    )


def document(allow_delete: bool = True) -> dict[str, Any]:
    return planned(allow_delete).to_dict()


def text_of(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def resigned(data: dict[str, Any]) -> dict[str, Any]:
    """What an attacker who knows the fingerprint function does after editing."""
    data["fingerprint"] = fingerprint_of(data)
    return data


def refusal(text: str) -> str:
    with pytest.raises(saved.SavedPlanError) as raised:
        saved.read(text, "plan.json")
    message = str(raised.value)
    assert "\n" not in message, message
    return message


DELETE_PAYROLL = {
    "action": "delete",
    "resource": "topic",
    "cluster": "west",
    "name": "payroll",
    "before": {"partitions": 3, "replication_factor": 1, "configs": {}},
    "reason": "topo created it and its source no longer exists",
    "edges": ["east->west"],
}
CREATE_EVIL = {
    "action": "create",
    "resource": "acl",
    "cluster": "west",
    "name": "east.orders",
    "after": EVIL.to_dict(),
    "reason": "copied from the source topic's ACLs by east->west",
    "edges": ["east->west"],
}


def _add(change: dict[str, Any]) -> Callable[[dict[str, Any]], object]:
    return lambda d: d["changes"].append(copy.deepcopy(change))


# -- the fingerprint ------------------------------------------------------------------------------


def test_a_saved_plan_reads_back_equal() -> None:
    plan = planned()
    text = text_of(plan.to_dict())
    assert saved.looks_like_plan(text)
    assert saved.read(text, "plan.json") == plan
    assert plan.to_dict()["fingerprint"] == plan.fingerprint == fingerprint_of(plan.to_dict())
    assert plan.to_dict()["format_version"] == FORMAT_VERSION == "2"


@pytest.mark.parametrize("key", FINGERPRINTED)
def test_the_fingerprint_covers_every_part_apply_acts_on(key: str) -> None:
    data = document()
    before = fingerprint_of(data)
    data[key] = {"edited": True}
    assert fingerprint_of(data) != before


@pytest.mark.parametrize("key", ["topo_version", "jobs"])
def test_informational_parts_are_not_fingerprinted(key: str) -> None:
    data = document()
    data[key] = [] if key == "jobs" else "9.9.9"
    assert saved.read(text_of(data), "plan.json") == planned()


# -- hand edits -----------------------------------------------------------------------------------

HAND_EDITS: dict[str, Callable[[dict[str, Any]], object]] = {
    "delete of a topic topo does not own": _add(DELETE_PAYROLL),
    "ACL for User:evil": _add(CREATE_EVIL),
    "owner": lambda d: d["topology"].update(name="payments-team"),
    "allow_delete": lambda d: d.update(allow_delete=not d["allow_delete"]),
    "topology file": lambda d: d["topology"].update(file="/etc/passwd"),
    "topology sha256": lambda d: d["topology"].update(sha256="0" * 64),
    "observed state": lambda d: d.update(observed_sha256="sha256:" + "0" * 64),
    "a cluster's address": lambda d: d["clusters"]["west"].update(bootstrap="evil:9092"),
    "a reason": lambda d: d["changes"][0].update(reason="harmless"),
    "a note": lambda d: d["notes"].append(
        {"level": "info", "cluster": "", "name": "", "message": "all fine"}
    ),
    "a change removed": lambda d: d["changes"].pop(0),
    "changes reordered": lambda d: d["changes"].reverse(),
    "a change duplicated": lambda d: d["changes"].append(copy.deepcopy(d["changes"][0])),
    "the summary": lambda d: d["summary"].update(delete=0),
    "a partition count": lambda d: d["changes"][0]["after"].update(partitions=99),
}


@pytest.mark.parametrize("edit", list(HAND_EDITS), ids=list(HAND_EDITS))
def test_a_hand_edited_plan_is_refused_as_edited(edit: str) -> None:
    data = document()
    HAND_EDITS[edit](data)
    with pytest.raises(saved.EditedPlanError) as raised:
        saved.read(text_of(data), "plan.json")
    assert str(raised.value) == EDITED


def test_a_duplicated_change_is_refused_even_with_the_fingerprint_recomputed() -> None:
    data = document()
    data["changes"].append(copy.deepcopy(data["changes"][0]))
    count = len(data["changes"])
    message = refusal(text_of(resigned(data)))
    assert message == (
        f"plan.json: change {count} (west: create topic east.clicks): it repeats change 1"
    )


def test_an_acl_change_is_a_repeat_only_for_the_same_binding() -> None:
    data = document()
    data["changes"] += [copy.deepcopy(CREATE_EVIL), copy.deepcopy(CREATE_EVIL)]
    data["changes"][-1]["after"]["principal"] = "User:other"
    data["summary"]["create"] += 2
    assert len(saved.read(text_of(resigned(data)), "plan.json").changes) == len(data["changes"])
    data["changes"][-1]["after"]["principal"] = "User:evil"
    assert "repeats change" in refusal(text_of(resigned(data)))


def test_a_change_on_an_unknown_cluster_is_refused_even_with_the_fingerprint_recomputed() -> None:
    data = document()
    data["changes"][0]["cluster"] = "elsewhere"
    assert refusal(text_of(resigned(data))) == (
        "plan.json: change 1 (elsewhere: create topic east.clicks): cluster 'elsewhere' is "
        "not one of the plan's clusters"
    )


def stop(flow: str, cluster: str) -> dict[str, Any]:
    """A flow change stopping `flow`'s job (its spec as a running driver reports it)."""
    analysis = analyse((CASE / "topology.yaml").read_text(), "topology.yaml")
    assert analysis.topology is not None
    [job] = job_views(analysis.topology).values()
    source, _, target = flow.partition("->")
    before = {**job, "flow": flow, "source": source, "target": target}
    return {
        "action": "delete",
        "resource": "flow",
        "cluster": cluster,
        "name": flow,
        "before": before,
        "reason": "stop",
        "edges": [flow],
    }


def test_a_flow_change_must_be_on_its_flows_target() -> None:
    data = document()
    data["changes"].append(stop("east->west", "east"))
    assert "must be on its flow's target cluster, not 'east'" in refusal(text_of(resigned(data)))


def test_a_flow_of_a_removed_cluster_may_still_be_stopped() -> None:
    """The planner stops the job of a flow whose target left the topology: that cluster is in
    no plan's clusters, and the change is the planner's own."""
    data = document()
    data["changes"].append(stop("east->gone", "gone"))
    assert saved.read(text_of(resigned(data)), "plan.json").changes[-1].cluster == "gone"


# -- malformed files ------------------------------------------------------------------------------


def test_every_truncation_is_recognised_as_a_plan_and_refused_in_one_line() -> None:
    text = text_of(document())
    complete = len(text.rstrip())
    for end in [*range(30, complete, max(1, complete // 200)), complete - 1]:
        cut = text[:end]
        assert saved.looks_like_plan(cut), end
        message = refusal(cut)
        assert message.startswith("plan.json:"), message
        assert message.endswith(
            ": not a complete plan: the JSON ends before it is closed (the file was cut short); "
            "save it again with `topo plan -o`"
        ), message


def test_broken_json_inside_the_file_is_located() -> None:
    text = text_of(document()).replace('"allow_delete": true', '"allow_delete": tru', 1)
    message = refusal(text)
    assert message == (
        "plan.json:11:19: not a plan topo wrote: this is not valid JSON (Expecting value)"
    )


def test_a_byte_order_mark_is_accepted() -> None:
    text = "\ufeff" + text_of(document())
    assert saved.looks_like_plan(text)
    assert saved.read(text, "plan.json") == planned()


@pytest.mark.parametrize(
    ("version", "shown"),
    [("1", "'1'"), (None, "None"), ("x" * 500, "'" + "x" * 76 + "...")],
)
def test_another_format_version_is_refused_naming_it(version: object, shown: str) -> None:
    data = document()
    data["format_version"] = version
    assert refusal(text_of(data)) == (
        f"plan.json: plan format {shown} is not the '2' this topo applies; plan again with "
        "this topo"
    )


def test_a_plan_of_format_1_is_refused_clearly() -> None:
    """What topo wrote before the fingerprint covered the whole plan."""
    data = document()
    data["format_version"] = "1"
    del data["observed_sha256"]
    assert "plan format '1' is not the '2'" in refusal(text_of(data))


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[]", "an array"), ("null", "null"), ('"plan"', "a string"), ("3", "a number")],
)
def test_json_that_is_not_an_object_is_refused(text: str, kind: str) -> None:
    assert refusal(text) == f"plan.json: not a plan topo wrote: it is {kind}, not a JSON object"


def test_a_key_written_twice_is_refused() -> None:
    """json.loads keeps the last of two keys; a reviewer would read the first."""
    text = text_of(document()).replace(
        '"allow_delete": true,', '"allow_delete": false, "allow_delete": true,', 1
    )
    assert "the key 'allow_delete' appears twice in one object" in refusal(text)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("NaN", "NaN is not a JSON value"),
        ("Infinity", "Infinity is not a JSON value"),
        ("1" * 5000, "not a plan topo wrote: Exceeds the limit"),
    ],
    ids=["NaN", "Infinity", "5000 digits"],
)
def test_numbers_json_cannot_hold_are_refused_in_one_line(value: str, why: str) -> None:
    text = text_of(document()).replace('"allow_delete": true', f'"allow_delete": {value}', 1)
    assert why in refusal(text)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("top\x00ology.yaml", "contains a NUL or another control character"),
        ("topology.yaml\nsecret", "contains a NUL or another control character"),
        ("", "is empty"),
        ("-", "is standard input ('-'): a saved plan needs its topology in a file"),
        ("a/" * 2100 + "t.yaml", "is longer than 4096 characters"),
        (
            "\ud800x.yaml",
            "is not text: it holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape)",
        ),
        ("a" * 300, "has a folder or file name longer than 255 bytes"),
        ("ok/" + "é" * 128 + "/t.yaml", "has a folder or file name longer than 255 bytes"),
    ],
    ids=[
        "NUL",
        "newline",
        "empty",
        "stdin",
        "too long",
        "lone surrogate",
        "long name",
        "long name in bytes",
    ],
)
def test_an_unusable_topology_path_is_refused_without_repeating_it(path: str, problem: str) -> None:
    data = document()
    data["topology"]["file"] = path
    message = refusal(text_of(resigned(data)))
    assert message == f"plan.json: not a plan topo wrote: its topology.file {problem}"


def test_a_name_ending_in_a_newline_is_not_a_name() -> None:
    """Python's `$` matches before a final newline; JSON Schema's does not."""
    data = document()
    data["topology"]["name"] = "topology\n"
    message = refusal(text_of(resigned(data)))
    assert message.startswith("plan.json: not a plan topo wrote: at topology/name:")


def test_a_topology_is_not_mistaken_for_a_plan() -> None:
    assert not saved.looks_like_plan("version: 1\nclusters: {}\n")
    assert not saved.looks_like_plan('{"version": 1, "clusters": {}}')
    assert saved.looks_like_plan('{"format_version": "2", "changes": [')


# -- against the topology, and against a fresh plan ----------------------------------------------


def test_a_plan_for_other_clusters_or_another_owner_does_not_fit_the_topology() -> None:
    plan = planned()
    analysis = analyse(TOPOLOGY, "topology.yaml")
    assert analysis.topology is not None
    saved.check_topology(plan, analysis.topology, "plan.json")
    moved = dataclasses.replace(plan, clusters={**plan.clusters, "west": "evil:9092"})
    with pytest.raises(saved.SavedPlanError, match="cluster 'west' differs"):
        saved.check_topology(moved, analysis.topology, "plan.json")
    other = dataclasses.replace(plan, owner="payments-team")
    with pytest.raises(saved.SavedPlanError, match="owner 'payments-team' is not the topology's"):
        saved.check_topology(other, analysis.topology, "plan.json")


def test_the_first_difference_from_a_fresh_plan_is_named() -> None:
    fresh = planned()
    changes = fresh.changes
    assert saved.first_difference(fresh, planned()) is None

    def differs(**edit: Any) -> str | None:
        return saved.first_difference(dataclasses.replace(fresh, **edit), fresh)

    assert differs(allow_delete=False) == "its allow_delete differs"
    assert differs(changes=changes[1:]) == (
        "change 1 is west: delete topic east.payments.eu, where topo now plans "
        "west: create topic east.clicks"
    )
    extra = saved.read(
        text_of(resigned({**document(), "changes": [*document()["changes"], DELETE_PAYROLL]})),
        "plan.json",
    ).changes[-1]
    assert differs(changes=(*changes, extra)) == (
        f"change {len(changes) + 1} (west: delete topic payroll) is not one topo plans now"
    )
    assert differs(changes=changes[:-1]) == (
        f"topo now also plans change {len(changes)} (west: delete ownership east.gone), which "
        "it lacks"
    )
    bigger = dataclasses.replace(changes[0], after={**(changes[0].after or {}), "partitions": 9})
    assert differs(changes=(bigger, *changes[1:])) == (
        "change 1 (west: create topic east.clicks): its after is not what topo plans now"
    )
    note = Note(NoteLevel.INFO, "west", "east.clicks", "all is well")
    assert differs(notes=(note,)) == "its note 1 is not what topo notes now"


# -- topo apply PLAN.json, end to end (clusters recorded, executor recorded) ----------------------


def _nothing(*args: object, **kwargs: object) -> None:
    return None


class Topo:
    """`topo` run in this process from a folder holding topology.yaml, with the clusters read
    from the recording and every executed change recorded instead of made."""

    def __init__(
        self, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from topology.kafka import changes

        self.folder = folder
        self.monkeypatch = monkeypatch
        self.capsys = capsys
        self.clusters = observed()
        self.executed: list[Any] = []
        self.err = ""
        (folder / "topology.yaml").write_text(TOPOLOGY)
        monkeypatch.chdir(folder)
        monkeypatch.setenv("TOPO_STATE_DIR", str(folder / "state"))
        monkeypatch.setattr("topology.cli.live.observe", lambda configs: self.clusters)
        # Nothing here may connect: not to check permissions either (where topo has that check).
        monkeypatch.setattr("topology.cli.live.check_permissions", _nothing, raising=False)
        monkeypatch.setattr(
            changes, "execute", lambda config, change, **_: self.executed.append(change)
        )

    def __call__(self, *args: str) -> tuple[int, str, str]:
        from topology.cli import main

        self.monkeypatch.setattr(sys, "argv", ["topo", *args])
        try:
            main()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else int(done.code is not None)
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def plan(self, *flags: str) -> dict[str, Any]:
        code, _out, err = self("plan", "topology.yaml", "-o", "plan.json", *flags)
        assert code == 0, err
        data: dict[str, Any] = json.loads((self.folder / "plan.json").read_text())
        return data

    def save(self, data: dict[str, Any]) -> None:
        (self.folder / "plan.json").write_text(text_of(data))

    def refused(self, *args: str) -> str:
        """The one error line of a refused apply, which changed nothing."""
        code, out, err = self(*args)
        self.err = err
        assert code == 1, out + err
        [line] = [line for line in err.splitlines() if line.startswith("error")]
        assert err.splitlines()[-1] == line and "Traceback" not in err, err
        assert self.executed == []
        return line


@pytest.fixture
def topo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Topo]:
    yield Topo(tmp_path, monkeypatch, capsys)


def test_an_untouched_saved_plan_applies_exactly_its_changes(topo: Topo) -> None:
    data = topo.plan("--allow-delete")
    code, out, err = topo("apply", "plan.json", "--allow-delete")
    assert code == 0, err
    assert [change.to_dict() for change in topo.executed] == data["changes"]
    assert "plan.json is current" in err and "Apply complete" in out


def test_an_edited_plan_is_refused_before_any_cluster_or_the_topology_is_read(topo: Topo) -> None:
    data = topo.plan("--allow-delete")
    data["changes"].append(DELETE_PAYROLL)
    data["topology"]["file"] = "no-such-topology.yaml"
    topo.save(data)
    topo.monkeypatch.setattr("topology.cli.live.observe", lambda configs: pytest.fail("read"))
    assert topo.refused("apply", "plan.json") == f"error: {EDITED}"


@pytest.mark.parametrize(
    "change", [DELETE_PAYROLL, CREATE_EVIL], ids=["delete payroll", "ACL for User:evil"]
)
def test_a_forged_change_with_a_recomputed_fingerprint_is_not_the_plan_topo_makes(
    topo: Topo, change: dict[str, Any]
) -> None:
    data = topo.plan("--allow-delete")
    data["changes"].append(change)
    topo.save(resigned(data))
    line = topo.refused("apply", "plan.json", "--allow-delete")
    assert line.startswith("error: stale or edited plan: plan.json is not the plan topo makes now")
    assert f"(change {len(data['changes'])} (west: " in line


def test_the_guard_refuses_a_forged_change_even_if_the_comparison_let_it_through(
    topo: Topo,
) -> None:
    data = topo.plan("--allow-delete")
    data["changes"].append(DELETE_PAYROLL)
    topo.save(resigned(data))
    topo.monkeypatch.setattr(saved, "first_difference", lambda ours, fresh: None)
    line = topo.refused("apply", "plan.json", "--allow-delete")
    assert line == (
        f"error: refusing to apply change {len(data['changes'])} (west: delete topic payroll): "
        "topo did not create this topic (no ownership record on the cluster names it); nothing "
        "was changed"
    )


def _never_read(configs: object) -> None:
    pytest.fail("apply read the clusters")


def test_a_plan_made_with_allow_delete_needs_allow_delete_to_apply(topo: Topo) -> None:
    """The reviewer's attack: a reviewed plan kept the orphans; the file is swapped for one
    with allow_delete true and the deletes, fingerprint recomputed. Without --allow-delete,
    apply refuses before reading the topology or any cluster."""
    reviewed = topo.plan()
    deleting = document(allow_delete=True)
    assert not reviewed["allow_delete"] and reviewed["changes"] != deleting["changes"]
    forged = {
        **reviewed,
        **{key: deleting[key] for key in ("allow_delete", "changes", "notes", "summary")},
    }
    topo.save(resigned(forged))
    topo.monkeypatch.setattr("topology.cli.live.observe", _never_read)
    for flags in [(), ("--dry-run",), ("--auto-approve",)]:
        assert topo.refused("apply", "plan.json", *flags) == (
            "error: plan.json was made with --allow-delete and deletes 2 topic(s); confirm "
            "with `topo apply plan.json --allow-delete`"
        )


def test_a_plan_made_with_allow_delete_that_deletes_nothing_still_needs_the_flag(
    topo: Topo,
) -> None:
    data = topo.plan("--allow-delete")
    data["changes"] = [c for c in data["changes"] if c["action"] != "delete"]
    data["summary"]["delete"] = 0
    topo.save(resigned(data))
    topo.monkeypatch.setattr("topology.cli.live.observe", _never_read)
    assert topo.refused("apply", "plan.json") == (
        "error: plan.json was made with --allow-delete (though it deletes no topic or ACL); "
        "confirm with `topo apply plan.json --allow-delete`"
    )


def test_allow_delete_with_a_plan_made_without_it_is_contradictory(topo: Topo) -> None:
    """The flag says "I reviewed deletes": a plan without any is not the one reviewed."""
    topo.plan()
    topo.monkeypatch.setattr("topology.cli.live.observe", _never_read)
    assert topo.refused("apply", "plan.json", "--allow-delete") == (
        "error: plan.json was made without --allow-delete, so it deletes nothing: apply it "
        "without --allow-delete, or plan again with it"
    )


def test_a_plan_made_without_allow_delete_applies_without_it(topo: Topo) -> None:
    data = topo.plan()
    code, _out, err = topo("apply", "plan.json")
    assert code == 0, err
    assert [change.to_dict() for change in topo.executed] == data["changes"]
    deletes = [c for c in topo.executed if c.action == "delete" and c.resource != "ownership"]
    assert deletes == []


def test_the_guard_also_stands_between_a_fresh_plan_and_the_clusters(topo: Topo) -> None:
    """With a topology file: a planner gone wrong (here, made to add a delete) is refused before
    confirmation and before the first change."""
    from topology.cli import live
    from topology.core.plan.values import Action, Change, Resource

    honest = live.make_plan

    def wrong(*args: Any, **kwargs: Any) -> Plan:
        made = honest(*args, **kwargs)
        delete = Change(
            Action.DELETE, Resource.TOPIC, "west", "payroll", "x", before=PAYROLL.to_dict()
        )
        return dataclasses.replace(made, changes=(*made.changes, delete))

    topo.monkeypatch.setattr(live, "make_plan", wrong)
    line = topo.refused("apply", "topology.yaml", "--auto-approve", "--allow-delete")
    assert "refusing to apply change" in line and "topo did not create this topic" in line


def test_a_stale_plan_is_refused(topo: Topo) -> None:
    topo.plan()
    east = topo.clusters["east"]
    grown = Topic("orders", 7, 1, {})
    topo.clusters["east"] = dataclasses.replace(east, topics={**east.topics, "orders": grown})
    line = topo.refused("apply", "plan.json")
    assert line.startswith("error: stale plan: the clusters changed after plan.json was made")


def test_a_plan_naming_another_file_never_shows_that_files_content(
    topo: Topo, tmp_path: Path
) -> None:
    secret = tmp_path / "credentials.yaml"
    secret.write_text("password: hunter2-do-not-print\n")
    data = topo.plan()
    data["topology"]["file"] = str(secret)
    topo.save(resigned(data))
    line = topo.refused("apply", "plan.json")
    assert line == f"error: stale plan: {secret} changed after plan.json was made; plan again"
    assert "hunter2" not in topo.err


UNUSABLE = {
    "a name too long": "a" * 300,
    "a lone surrogate": "\ud800x.yaml",
    "too long in bytes": "é/" * 2000 + "t.yaml",  # 4006 characters, 6006 bytes
}


@pytest.mark.parametrize("path", list(UNUSABLE.values()), ids=list(UNUSABLE))
@pytest.mark.parametrize("checked", [True, False], ids=["as saved", "past saved's check"])
def test_a_topology_path_no_system_opens_is_one_line_that_does_not_repeat_it(
    topo: Topo, path: str, checked: bool
) -> None:
    """Each once refused by `saved.read`; and, were that check gone, by apply where it opens
    the path (it once crashed there: OSError ENAMETOOLONG, UnicodeEncodeError)."""
    data = topo.plan()
    data["topology"]["file"] = path
    (topo.folder / "plan.json").write_text(json.dumps(resigned(data)), encoding="utf-8")
    if not checked:
        topo.monkeypatch.setattr(saved, "_check_topology_file", _nothing)
    line = topo.refused("apply", "plan.json")
    assert line.startswith("error: plan.json: ") and "internal error" not in topo.err
    assert path[:20] not in line and "é/é/" not in line
    if not checked or path.startswith("é/"):  # 4006 characters pass saved's check
        assert line in (
            "error: plan.json: cannot read the topology file it names (File name too long)",
            "error: plan.json: its topology.file is not a path this system can open",
        )


def test_an_unreadable_topology_is_one_line_that_does_not_repeat_its_path(topo: Topo) -> None:
    """EACCES (the test may run as root, which chmod does not stop: os.open is made to refuse)."""
    import errno

    topo.plan()
    real = os.open

    def refusing(path: str, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("topology.yaml"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real(path, *args, **kwargs)

    topo.monkeypatch.setattr(os, "open", refusing)
    assert topo.refused("apply", "plan.json") == (
        "error: plan.json: cannot read the topology file it names (Permission denied)"
    )


def test_a_different_file_of_the_same_name_here_does_not_hide_the_one_beside_the_plan(
    topo: Topo,
) -> None:
    """The plan names topology.yaml; the working folder holds another file of that name (never
    parsed: it is not valid YAML here), the right one is next to the plan."""
    data = topo.plan()
    (topo.folder / "ci").mkdir()
    (topo.folder / "ci" / "topology.yaml").write_text(TOPOLOGY)
    topo.save(data)
    (topo.folder / "plan.json").rename(topo.folder / "ci" / "plan.json")
    (topo.folder / "topology.yaml").write_text("version: 1\nclusters: [unclosed\n")
    code, out, err = topo("apply", "ci/plan.json")
    assert code == 0, err
    assert "ci/plan.json is current" in err and "Apply complete" in out
    assert [change.to_dict() for change in topo.executed] == data["changes"]
    (topo.folder / "ci" / "topology.yaml").write_text(TOPOLOGY + "# edited\n")
    topo.executed.clear()
    assert topo.refused("apply", "ci/plan.json") == (
        "error: stale plan: topology.yaml changed after ci/plan.json was made; plan again"
    )
    assert "unclosed" not in topo.err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_plan_naming_a_fifo_does_not_hang(topo: Topo, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = topo.plan()
    data["topology"]["file"] = str(fifo)
    topo.save(resigned(data))
    assert topo.refused("apply", "plan.json") == (
        f"error: {fifo}: not a regular file, so not the topology plan.json names"
    )


def test_a_changed_topology_is_stale_and_is_not_parsed(topo: Topo) -> None:
    topo.plan()
    (topo.folder / "topology.yaml").write_text("version: 1\nclusters: [unclosed\n")
    line = topo.refused("apply", "plan.json")
    assert line == "error: stale plan: topology.yaml changed after plan.json was made; plan again"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format_version": "2", "changes": [{"action": "cre', "not a complete plan"),
        ('\ufeff{"format_version": "2", "changes": [', "not a complete plan"),
        ('{"format_version": "1", "changes": []}', "plan format '1' is not the '2'"),
    ],
    ids=["truncated", "BOM and truncated", "old format"],
)
def test_a_malformed_plan_file_is_one_clear_line(topo: Topo, text: str, message: str) -> None:
    (topo.folder / "plan.json").write_text(text, encoding="utf-8")
    line = topo.refused("apply", "plan.json")
    assert message in line and "error[T" not in line
