"""The plan document: its schema, and its text and markdown renderings (snapshots).

Plans are built here from `topology.core.plan.values` values, so these tests need no planner and no
broker; every one is checked against schemas/plan.schema.json before it is rendered.
"""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion

from topology.core.observed import Acl
from topology.core.plan.values import (
    Action,
    Change,
    Note,
    NoteLevel,
    Plan,
    Resource,
    plan_from_dict,
)
from topology.core.render import plan_markdown, plan_text

SCHEMA = json.loads(
    (Path(__file__).parent.parent.parent / "schemas" / "plan.schema.json").read_text()
)
VALIDATOR = Draft202012Validator(SCHEMA)
TOPOLOGY_SHA = "3f" * 32
OBSERVED = "sha256:" + "a1" * 32
CLUSTERS = {"west": "west-kafka:9092", "central": "central-1:9092,central-2:9092"}

Create, Update, Delete, Replace = Action.CREATE, Action.UPDATE, Action.DELETE, Action.REPLACE


def _plan(*changes: Change, notes: tuple[Note, ...] = (), allow_delete: bool = False) -> Plan:
    return Plan(
        topology_file="topology.yaml",
        topology_sha256=TOPOLOGY_SHA,
        owner="topology",
        observed_sha256=OBSERVED,
        clusters=CLUSTERS,
        changes=changes,
        notes=notes,
        allow_delete=allow_delete,
        topo_version="0.1.0",
    )


def _acl(principal: str, operation: str, resource: str = "east.orders") -> dict[str, str]:
    return Acl("TOPIC", resource, "LITERAL", principal, "*", operation, "ALLOW").to_dict()


def every_shape() -> Plan:
    """One change of every shape the planner emits, on two clusters, in apply's order."""
    return _plan(
        Change(
            Create,
            Resource.TOPIC,
            "west",
            "topo-state.internal",
            "topo's ownership records for this cluster",
            after={
                "partitions": 1,
                "replication_factor": 3,
                "configs": {"cleanup.policy": "compact"},
                "purpose": "state",
                "sources": [],
            },
        ),
        Change(
            Create,
            Resource.TOPIC,
            "west",
            "east.orders",
            "replicated from east/orders by east->west",
            after={
                "partitions": 6,
                "replication_factor": 3,
                "configs": {"cleanup.policy": "compact", "retention.ms": "604800000"},
                "purpose": "replica",
                "sources": ["east/orders"],
            },
            edges=("east->west",),
        ),
        Change(
            Create,
            Resource.TOPIC,
            "central",
            "orders",
            "aggregated from east/orders and west/orders by east->central, west->central",
            after={
                "partitions": 12,
                "replication_factor": 3,
                "configs": {},
                "purpose": "replica",
                "sources": ["east/orders", "west/orders"],
            },
            edges=("east->central", "west->central"),
        ),
        Change(
            Create,
            Resource.TOPIC,
            "west",
            "east.heartbeats",
            "heartbeats of east->west",
            edges=("east->west",),
            after={
                "partitions": 1,
                "replication_factor": 3,
                "configs": {},
                "purpose": "heartbeats",
                "sources": ["east/heartbeats"],
            },
        ),
        Change(
            Create,
            Resource.OWNERSHIP,
            "west",
            "east.clicks",
            "already exists with the settings east->west needs: topo adopts it",
            after={"edges": ["east->west"]},
            edges=("east->west",),
        ),
        Change(
            Update,
            Resource.OWNERSHIP,
            "central",
            "orders",
            "west->central now replicates into it too",
            before={"edges": ["east->central"]},
            after={"edges": ["east->central", "west->central"]},
            edges=("east->central", "west->central"),
        ),
        Change(
            Update,
            Resource.PARTITIONS,
            "west",
            "east.clicks",
            "east/clicks grew from 3 to 6 partitions",
            before={"partitions": 3},
            after={"partitions": 6},
            edges=("east->west",),
        ),
        Change(
            Update,
            Resource.TOPIC_CONFIG,
            "west",
            "east.clicks",
            "kept in sync with east/clicks",
            before={"retention.ms": "1000", "cleanup.policy": None, "segment.ms": "600000"},
            after={"retention.ms": "2000", "cleanup.policy": "compact", "segment.ms": None},
            edges=("east->west",),
        ),
        Change(
            Create,
            Resource.ACL,
            "west",
            "east.orders",
            "topo's replication writes east.orders as User:topo",
            after=_acl("User:topo", "WRITE"),
            edges=("east->west",),
        ),
        Change(
            Delete,
            Resource.ACL,
            "west",
            "east.orders",
            "no flow reads east.orders as User:legacy any more",
            before=_acl("User:legacy", "READ"),
        ),
        Change(
            Delete,
            Resource.TOPIC,
            "west",
            "east.payments",
            "no longer replicated: east->west stopped matching payments (--allow-delete)",
            before={
                "partitions": 3,
                "replication_factor": 3,
                "configs": {"retention.ms": "86400000"},
            },
            edges=("east->west",),
        ),
        Change(
            Delete,
            Resource.OWNERSHIP,
            "central",
            "east.gone",
            "a stale record: the topic no longer exists",
            before={"edges": ["east->central"]},
            edges=("east->central",),
        ),
        notes=(
            Note(
                NoteLevel.INFO,
                "west",
                "east.clicks",
                "min.insync.replicas is not synced: west has fewer brokers than east",
            ),
            Note(
                NoteLevel.WARNING,
                "central",
                "east.legacy",
                "kept: no longer replicated, and deleting it needs --allow-delete",
            ),
        ),
        allow_delete=True,
    )


def empty() -> Plan:
    return _plan()


def empty_with_notes() -> Plan:
    return _plan(
        notes=(
            Note(
                NoteLevel.WARNING,
                "west",
                "east.old",
                "kept: no longer replicated, and deleting it needs --allow-delete",
            ),
            Note(NoteLevel.INFO, "", "", "2 clusters observed, nothing to do"),
        )
    )


def deletes_and_notes() -> Plan:
    return _plan(
        Change(
            Delete,
            Resource.ACL,
            "central",
            "east.orders",
            "east->central was removed",
            before=_acl("User:topo", "WRITE"),
        ),
        Change(
            Delete,
            Resource.TOPIC,
            "central",
            "east.orders",
            "east->central was removed (--allow-delete)",
            before={"partitions": 6, "replication_factor": 3, "configs": {}},
            edges=("east->central",),
        ),
        Change(
            Delete,
            Resource.TOPIC,
            "west",
            "east.orders",
            "east->west was removed (--allow-delete)",
            before={
                "partitions": 6,
                "replication_factor": 2,
                "configs": {"cleanup.policy": "compact"},
            },
            edges=("east->west",),
        ),
        notes=(
            Note(NoteLevel.INFO, "west", "east.orders", "its consumer groups are not deleted"),
            Note(
                NoteLevel.WARNING, "west", "east.clicks", "kept: it has records topo did not write"
            ),
            Note(NoteLevel.WARNING, "central", "", "no authorizer: ACLs are not managed"),
        ),
        allow_delete=True,
    )


def needs_escaping() -> Plan:
    """Text that breaks markdown tables and code spans unless escaped: |, `, *, _, <, newlines."""
    return _plan(
        Change(
            Create,
            Resource.TOPIC,
            "west",
            "odd|name`with`ticks",
            "a *reason* with_underscores <b>html</b> | pipe and `code`",
            after={
                "partitions": 1,
                "replication_factor": 1,
                "configs": {"message|key": "a|b", "tick": "``x`", "nl": "line\nbreak"},
                "purpose": "replica",
                "sources": ["east/odd|name`with`ticks"],
            },
        ),
        Change(
            Update,
            Resource.TOPIC_CONFIG,
            "west",
            "odd|name`with`ticks",
            "sync | `x`",
            before={"cleanup.policy": "`delete`"},
            after={"cleanup.policy": "compact|x"},
        ),
        Change(
            Create,
            Resource.ACL,
            "west",
            "odd|name`with`ticks",
            "principal with a pipe",
            after=_acl("User:CN=a|b,O=`x`", "READ", "odd|name`with`ticks"),
        ),
        notes=(Note(NoteLevel.WARNING, "west", "a|b", "message with | and ` and\nnewline"),),
    )


def replace() -> Plan:
    """The schema allows replace though the planner does not emit it yet: render it anyway."""
    return _plan(
        Change(
            Replace,
            Resource.TOPIC,
            "west",
            "east.orders",
            "partitions cannot shrink: 6 on west, east/orders has 3",
            before={"partitions": 6, "replication_factor": 3, "configs": {}},
            after={
                "partitions": 3,
                "replication_factor": 3,
                "configs": {},
                "purpose": "replica",
                "sources": ["east/orders"],
            },
            edges=("east->west",),
        ),
        allow_delete=True,
    )


PLANS: dict[str, Callable[[], Plan]] = {
    "every-shape": every_shape,
    "empty": empty,
    "empty-with-notes": empty_with_notes,
    "deletes-and-notes": deletes_and_notes,
    "needs-escaping": needs_escaping,
    "replace": replace,
}


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$id"] == "urn:topo:schema:plan"


@pytest.mark.parametrize("case", PLANS)
def test_every_plan_matches_the_schema_and_reads_back(case: str) -> None:
    data = PLANS[case]().to_dict()
    VALIDATOR.validate(data)
    assert plan_from_dict(data).to_dict() == data


@pytest.mark.parametrize("case", PLANS)
@pytest.mark.parametrize("render", [plan_text.render, plan_markdown.render], ids=["text", "md"])
def test_renderings(
    case: str, render: Callable[[dict[str, Any]], str], snapshot: SnapshotAssertion
) -> None:
    data = PLANS[case]().to_dict()
    output = render(data)
    # The dict is all a renderer reads: the JSON round trip (a saved plan) renders the same.
    assert render(json.loads(json.dumps(data))) == output
    assert data == PLANS[case]().to_dict()  # and it is left as it was
    assert "\x1b[" not in output  # no colour unless asked
    assert output == snapshot


def test_summary_line() -> None:
    assert plan_text.render(empty().to_dict()).endswith(
        "No changes. The clusters match the topology.\n"
    )
    assert plan_text.render(every_shape().to_dict()).endswith(
        "Plan: 6 to create, 3 to update, 3 to delete.\n"
    )
    assert plan_text.render(replace().to_dict()).endswith(
        "Plan: 0 to create, 0 to update, 0 to delete, 1 to replace.\n"
    )


def test_topic_deletes_are_loud() -> None:
    text = plan_text.render(deletes_and_notes().to_dict())
    assert text.startswith("topo will make these changes.")
    assert "! This plan deletes 2 topics and every record in them" in text
    assert "  ! DELETES topic east.orders on west: every record in it is deleted" in text
    markdown = plan_markdown.render(deletes_and_notes().to_dict())
    assert "> [!WARNING]" in markdown


def test_markdown_table_cells_never_split() -> None:
    """Every row of every table has exactly the header's number of unescaped pipes."""
    markdown = plan_markdown.render(needs_escaping().to_dict())
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert rows
    for row in rows:
        assert row.replace("\\|", "").count("|") == rows[0].count("|"), row


def _broken(edit: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    data = copy.deepcopy(every_shape().to_dict())
    edit(data)
    return data


def _change(data: dict[str, Any], action: str, resource: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        c for c in data["changes"] if (c["action"], c["resource"]) == (action, resource)
    )
    return found


# Each broken document, and a piece of the error that must reject it (so it is rejected for the
# reason the case names, not by accident).
BROKEN: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "missing fingerprint": (lambda d: d.pop("fingerprint"), "'fingerprint' is a required"),
    "bad fingerprint": (lambda d: d.update(fingerprint="sha256:XYZ"), "does not match"),
    "wrong format version": (lambda d: d.update(format_version="1"), "'2' was expected"),
    "unknown top-level field": (lambda d: d.update(secrets={}), "'secrets' was unexpected"),
    "summary without replace": (lambda d: d["summary"].pop("replace"), "'replace' is a required"),
    "unknown action": (lambda d: d["changes"][0].update(action="rename"), "'rename' is not one"),
    "unknown resource": (lambda d: d["changes"][0].update(resource="job"), "'job' is not one"),
    "change without reason": (lambda d: d["changes"][0].pop("reason"), "'reason' is a required"),
    "change without edges": (lambda d: d["changes"][0].pop("edges"), "'edges' is a required"),
    "bad edge": (lambda d: d["changes"][1].update(edges=["east to west"]), "does not match"),
    "create with a before": (
        lambda d: d["changes"][0].update(before={"partitions": 1}),
        "False schema does not allow",
    ),
    "update without a before": (
        lambda d: _change(d, "update", "partitions").pop("before"),
        "'before' is a required",
    ),
    "delete with an after": (
        lambda d: _change(d, "delete", "topic").update(after={}),
        "False schema does not allow",
    ),
    "update of a whole topic": (
        lambda d: d["changes"][0].update(action="update", before={}),
        "'topic' is not one of",
    ),
    "topic without purpose": (
        lambda d: d["changes"][0]["after"].pop("purpose"),
        "'purpose' is a required",
    ),
    "unknown purpose": (
        lambda d: d["changes"][0]["after"].update(purpose="backup"),
        "'backup' is not one of",
    ),
    "partitions as a string": (
        lambda d: _change(d, "update", "partitions")["after"].update(partitions="6"),
        "'6' is not of type 'integer'",
    ),
    "config value as a number": (
        lambda d: _change(d, "update", "topic_config")["after"].update({"retention.ms": 2000}),
        "2000 is not of type 'string', 'null'",
    ),
    "acl without principal": (
        lambda d: _change(d, "create", "acl")["after"].pop("principal"),
        "'principal' is a required",
    ),
    "acl with unknown permission": (
        lambda d: _change(d, "delete", "acl")["before"].update(permission="MAYBE"),
        "'MAYBE' is not one of",
    ),
    "deleted topic with a purpose": (
        lambda d: _change(d, "delete", "topic")["before"].update(purpose="replica"),
        "'purpose' was unexpected",
    ),
    "ownership without edges": (
        lambda d: _change(d, "create", "ownership").update(after={}),
        "'edges' is a required",
    ),
    "note with unknown level": (lambda d: d["notes"][0].update(level="error"), "'error' is not"),
    "cluster with credentials": (
        lambda d: d["clusters"]["west"].update(password="x"),
        "'password' was unexpected",
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_plan_is_rejected(case: str) -> None:
    edit, expected = BROKEN[case]
    errors = [error.message for error in VALIDATOR.iter_errors(_broken(edit))]
    assert any(expected in message for message in errors), errors
