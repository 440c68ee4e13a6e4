"""Where diagnostics are shown (the terminal, `--format json`, the review comment and its
annotations, `topo import mm2`), a secret written in a file is never: not its value, not the
line that holds it. FILE:LINE:COL always stays."""

import json
from pathlib import Path

import pytest

from topology.core.analysis import analyse
from topology.core.diagnostics import Span, error, warning
from topology.core.render.diagnostics import as_json, as_text, redacted
from topology.core.source import parse
from topology.review.annotations import workflow_commands
from topology.review.comment import body
from topology.review.findings import review_file
from topology.review.selection import Change

GOLDEN = Path(__file__).parent.parent / "golden"
PASSWORDS = ("hunter2", "changeit", "k3y-Material", "mirror:hunter3")

TOPOLOGY = """\
version: 1
clusters:
  east:
    bootstrap: "127.0.0.1:24980"
    security:
      protocol: SASL_PLAINTEXT
      sasl: {mechanism: PLAIN, username: mirror, password: hunter2}
    client:
      ssl.keystore.pasword: changeit
      ssl.key.pem: |
        -----BEGIN PRIVATE KEY-----
        k3y-Material
        -----END PRIVATE KEY-----
      schema.registry.basic.auth.user.info: "mirror:hunter3"
      acks: all
  west: {bootstrap: "127.0.0.1:16340"}
flows:
  - mirror: {from: east, to: west}
    topics: {include: ["orders["]}
"""


def _shown(text: str) -> str:
    analysis = analyse(text, "t.yaml")
    return "\n".join(as_text(d, analysis.document) for d in analysis.diagnostics)


def test_a_diagnostic_about_a_secret_has_no_line_under_it() -> None:
    shown = _shown(TOPOLOGY)
    assert "t.yaml:7:60: warning[T206]: cluster east: security.sasl.password" in shown
    assert "t.yaml:9:29: warning[T206]: cluster east: client.ssl.keystore.pasword" in shown
    assert "t.yaml:10:20: warning[T206]: cluster east: client.ssl.key.pem" in shown
    assert "t.yaml:14:45: warning[T206]: " in shown
    for password in PASSWORDS:
        assert password not in shown
    # Other diagnostics keep their line.
    assert '  19 |     topics: {include: ["orders["]}' in shown


def test_the_lines_of_a_secret_written_over_several_lines_are_not_shown() -> None:
    document, _ = parse(TOPOLOGY, "t.yaml")
    for line in (10, 11, 12, 13):
        problem = error("T201", "about something else", Span("t.yaml", line, 1))
        assert as_text(problem, document) == problem.headline()
    problem = error("T201", "about something else", Span("t.yaml", 15, 7))
    assert "  15 |       acks: all" in as_text(problem, document)


@pytest.mark.parametrize(
    ("line", "hidden"),
    [
        ("      sasl: {mechanism: PLAIN, username: u, password: hunter2}", True),
        ("    client: {ssl.keystore.password: changeit, acks: all}", True),
        ('  - {"sasl.jass.config": "x y z"}', True),
        ("      password: ${env:EAST_PASSWORD}", False),
        ("      password: '${file:secrets/east}'", False),
        ("      password: |", True),  # and the block's lines below it
        ("      password: &Xy9secretpw", True),  # an anchor's name, or an alias's, can be it
        ("      password: *Xy9secretpw", True),
        ("      password: >Secr3tpw", True),
        ("      password: [Secr3tpw]", True),
        ("      sasl: {mechanism: PLAIN, password: {Secr3tpw}", True),
        ("      key_password: !Secr3tpw", True),
        ("      password: %Secr3tpw", True),
        ("      password: @Secr3tpw", True),
        ("      password: `Secr3tpw", True),
        ("      password: ,Secr3tpw", True),
        ("      password: ${env:EAST_PASSWORD}  # from the CI secret store", False),
        ("      sasl: {password: , username: u}", False),
        ("      password:", False),
        ("      ssl.key.location: certs/east.key", False),
        ("      sasl.oauthbearer.token.endpoint.url: https://idp/token", False),
        ("      username: mirror", False),
    ],
)
def test_a_line_holding_a_secret_is_found_from_its_text(line: str, hidden: bool) -> None:
    document, _ = parse(line + "\n", "t.yaml")  # it need not parse as a topology
    problem = error("T201", "x", Span("t.yaml", 1, 1))
    assert (as_text(problem, document) == problem.headline()) is hidden


def test_the_lines_below_a_secret_that_continue_its_value_are_not_shown() -> None:
    text = """\
      sasl:
        password: |
          Secr3tpw

          more
        username: [u
"""
    document, problems = parse(text, "t.yaml")
    assert document.data is None and problems  # found from the text alone
    for line in (2, 3, 4, 5):
        problem = error("T201", "x", Span("t.yaml", line, 1))
        assert as_text(problem, document) == problem.headline()
    problem = error("T201", "x", Span("t.yaml", 6, 9))
    assert "  6 |         username: [u" in as_text(problem, document)


def test_the_line_an_aliased_secret_is_written_on_is_not_shown() -> None:
    text = TOPOLOGY.replace("version: 1\n", "version: 1\nx-pw: &pw Secr3tpw\n").replace(
        "password: hunter2", "password: *pw"
    )
    shown = _shown(text)
    assert "t.yaml:2:1: error[T101]: unknown key 'x-pw'" in shown
    assert "Secr3tpw" not in shown


# A secret, whatever it starts with, in a flow mapping and in block style; and on a line YAML
# cannot parse.
LEADING = (
    *("&Xy9secretpw", "*Xy9secretpw", ">Secr3tpw", "|Secr3tpw", "[Secr3tpw]", "{Secr3tpw"),
    *("!Secr3tpw", "%Secr3tpw", "@Secr3tpw", "`Secr3tpw", "!!int Secr3tpw", "Secr3tpw: x"),
    *('"Secr3tpw', "&Xy9secretpw Secr3tpw"),
)
FLOW = """\
version: 1
clusters:
  east:
    bootstrap: "127.0.0.1:24980"
    security: {protocol: SASL_SSL, sasl: {mechanism: PLAIN, username: u, password: VALUE}}
  west: {bootstrap: "127.0.0.1:16340"}
flows:
  - mirror: {from: east, to: west}
"""
BLOCK = """\
version: 1
clusters:
  east:
    bootstrap: "127.0.0.1:24980"
    security:
      protocol: SASL_SSL
      sasl:
        mechanism: PLAIN
        username: u
        password: VALUE
  west: {bootstrap: "127.0.0.1:16340"}
flows:
  - mirror: {from: east, to: west}
"""
LEAKED = ("Xy9", "Secr3t")


def leading_cases() -> list[tuple[str, str]]:
    """(name, topology) for each value in each style."""
    return [
        (f"{style.lower()}-{number}", text.replace("VALUE", value))
        for number, value in enumerate(LEADING)
        for style, text in (("FLOW", FLOW), ("BLOCK", BLOCK))
    ]


@pytest.mark.parametrize(("name", "text"), leading_cases())
def test_a_secret_is_not_shown_whatever_it_starts_with(name: str, text: str) -> None:
    analysis = analyse(text, "t.yaml")
    shown = _shown(text)
    report = json.dumps(as_json(analysis.document, analysis.diagnostics))
    review = review_file("t.yaml", Change.ADDED, None, text, "main:t.yaml")
    comment = body([review], base_ref="main", head_sha="abc1234", plan_requested=False)
    for leaked in LEAKED:
        assert leaked not in shown and leaked not in report and leaked not in comment
    # Every diagnostic is still there, located.
    places = [str(d.span) for d in analysis.diagnostics]
    places += [str(note.span) for d in analysis.diagnostics for note in d.notes]
    assert sorted(line.split(": ")[0] for line in shown.splitlines() if "t.yaml:" in line) == (
        sorted(places)
    )


def test_a_message_quoting_the_secret_leaves_it_out_but_keeps_the_rest() -> None:
    analysis = analyse(BLOCK.replace("VALUE", "*Xy9secretpw"), "t.yaml")
    (found,) = analysis.diagnostics
    assert found.code == "T001"
    assert as_text(found, analysis.document) == (
        "t.yaml:10:19: error[T001]: YAML syntax: found undefined alias '…'"
    )
    assert redacted(found, analysis.document).message == "YAML syntax: found undefined alias '…'"
    report = json.loads(json.dumps(as_json(analysis.document, analysis.diagnostics)))
    assert report["diagnostics"][0]["message"] == "YAML syntax: found undefined alias '…'"
    # What is quoted from elsewhere on the line, or is no more than YAML's own punctuation, stays.
    shown = _shown(FLOW.replace("VALUE", ">Secr3tpw"))
    assert "t.yaml:5:84: error[T001]: YAML syntax: found character '>' that cannot" in shown


def test_a_secret_diagnostic_is_marked_in_json_and_never_quotes_the_value() -> None:
    analysis = analyse(TOPOLOGY.replace("password: hunter2", 'password: "hunter2${env:P"'), "t")
    report = as_json(analysis.document, analysis.diagnostics)
    text = json.dumps(report)
    for password in PASSWORDS:
        assert password not in text
    secret = [d for d in report["diagnostics"] if d.get("secret")]  # type: ignore[attr-defined]
    assert {d["code"] for d in secret} == {"T204", "T206"}
    assert all(d["line"] and d["column"] for d in secret)


def test_secret_flag_reaches_the_value_and_defaults_to_off() -> None:
    assert warning("T206", "m", Span("f", 1, 1), secret=True).secret
    assert not error("T201", "m", Span("f", 1, 1)).secret
    assert "secret" not in error("T201", "m", Span("f", 1, 1)).to_dict()


def test_the_review_comment_and_annotations_show_no_secret() -> None:
    review = review_file("t.yaml", Change.ADDED, None, TOPOLOGY, "main:t.yaml")
    comment = body([review], base_ref="main", head_sha="abc1234", plan_requested=False)
    commands = "\n".join(workflow_commands([review]))
    for password in PASSWORDS:
        assert password not in comment and password not in commands
    assert "t.yaml:7:60: warning[T206]" in comment
    assert "::warning file=t.yaml,line=7,col=60,title=topo T206::" in commands


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_no_golden_case_shows_a_line_with_a_secret(case: str) -> None:
    text = (GOLDEN / case / "topology.yaml").read_text(encoding="utf-8")
    shown = _shown(text)
    secret_lines = [
        f"  {number} | {line}"
        for number, line in enumerate(text.splitlines(), 1)
        if any(word in line for word in ("hunter2", "changeit", "BEGIN PRIVATE", "pre-$"))
    ]
    assert not [line for line in secret_lines if line in shown]


@pytest.mark.parametrize("value", ["*Xy9secretpw", "!!int Secr3tpw"])
def test_annotations_leave_out_what_a_message_quotes_of_a_secret(value: str) -> None:
    text = BLOCK.replace("VALUE", value)
    review = review_file("t.yaml", Change.ADDED, None, text, "main:t.yaml")
    commands = "\n".join(workflow_commands([review]))
    assert "::error file=t.yaml" in commands
    assert "Xy9secretpw" not in commands and "Secr3tpw" not in commands
