"""topology.secrets: `${env:NAME}` and `${file:path}` references, found offline, resolved late."""

from pathlib import Path

import pytest

from topology.errors import TopoError
from topology.secrets import (
    SECRET_KEY,
    Reference,
    SecretError,
    reference,
    reference_problem,
    resolve,
)

SECRET = "s3cr3t-value"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${env:EAST_PASSWORD}", Reference("env", "EAST_PASSWORD")),
        ("${file:certs/east.pass}", Reference("file", "certs/east.pass")),
        ("  ${env:X}\n", Reference("env", "X")),  # surrounding blanks are not part of the value
        ("${file:/etc/kafka/pass}", Reference("file", "/etc/kafka/pass")),
    ],
)
def test_a_whole_value_reference_is_parsed(value: str, expected: Reference) -> None:
    assert reference(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        *("plain", "", "${env:}", "${env:X", "pre${env:X}", "${env:X}post", "${vault:x}"),
        *("$env:X", "${env:X}${env:Y}", "{env:X}"),
    ],
)
def test_anything_else_is_not_a_reference(value: str) -> None:
    assert reference(value) is None


def test_a_reference_prints_as_it_is_written() -> None:
    assert str(Reference("env", "EAST_USER")) == "${env:EAST_USER}"
    assert str(Reference("file", "a/b")) == "${file:a/b}"


@pytest.mark.parametrize("value", ["plain", "", "${env:X}", "${file:a}", "$dollar", "{}"])
def test_values_that_are_no_reference_or_a_whole_one_have_no_problem(value: str) -> None:
    assert reference_problem(value) is None


@pytest.mark.parametrize("value", ["${env:X", "pre${env:X}", "${vault:x}", "${env:}", "a${b"])
def test_a_value_that_looks_like_a_reference_but_is_not_one_is_a_problem(value: str) -> None:
    assert reference_problem(value) == (
        f"'{value}' looks like a secret reference but is not one; write the whole value as "
        "${env:NAME} or ${file:path}"
    )


def _no_file(path: Path) -> str:
    raise AssertionError(f"read {path}")


def test_a_plain_value_resolves_to_itself_without_looking_anywhere() -> None:
    value = resolve(
        "admin", cluster="east", setting="sasl.username", environ={}, read_file=_no_file
    )
    assert value == "admin"


def test_an_env_reference_resolves_from_the_given_environment() -> None:
    environ = {"EAST_PASSWORD": SECRET, "OTHER": "x"}
    found = resolve("${env:EAST_PASSWORD}", cluster="east", setting="p", environ=environ)
    assert found == SECRET


def test_a_missing_variable_names_the_cluster_setting_and_variable_but_no_value() -> None:
    environ = {"EAST_PASSWORD_OLD": SECRET, "PATH": "/bin"}
    with pytest.raises(SecretError) as raised:
        resolve(
            "${env:EAST_PASSWORD}",
            cluster="east",
            setting="security.sasl.password",
            environ=environ,
        )
    assert str(raised.value) == (
        "cluster east: security.sasl.password needs environment variable EAST_PASSWORD, "
        "which is not set"
    )
    assert SECRET not in str(raised.value)
    assert isinstance(raised.value, TopoError)  # the CLI prints it as one line, no traceback


def test_an_empty_variable_is_set_and_resolves_to_empty() -> None:
    assert resolve("${env:E}", cluster="c", setting="s", environ={"E": ""}) == ""


def test_a_file_reference_is_read_relative_to_the_topologys_folder() -> None:
    read: list[Path] = []

    def read_file(path: Path) -> str:
        read.append(path)
        return f"  {SECRET}\n"

    found = resolve(
        "${file:secrets/east.pass}",
        cluster="east",
        setting="p",
        environ={},
        read_file=read_file,
        base=Path("/repo/topologies"),
    )
    assert found == SECRET  # the trailing newline editors add is not part of the secret
    assert read == [Path("/repo/topologies/secrets/east.pass")]


def test_an_absolute_file_reference_ignores_the_base() -> None:
    read: list[Path] = []

    def read_file(path: Path) -> str:
        read.append(path)
        return SECRET

    resolve(
        "${file:/run/secrets/p}",
        cluster="c",
        setting="s",
        environ={},
        read_file=read_file,
        base=Path("/repo"),
    )
    assert read == [Path("/run/secrets/p")]


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (FileNotFoundError(2, "No such file or directory"), "No such file or directory"),
        (PermissionError(13, "Permission denied"), "Permission denied"),
        (IsADirectoryError(21, "Is a directory"), "Is a directory"),
        (OSError("no errno"), "OSError"),
    ],
)
def test_an_unreadable_file_names_the_cluster_setting_path_and_reason(
    failure: OSError, reason: str
) -> None:
    def read_file(path: Path) -> str:
        raise failure

    with pytest.raises(SecretError) as raised:
        resolve(
            "${file:east.pass}",
            cluster="east",
            setting="security.tls.key_password",
            environ={},
            read_file=read_file,
            base=Path("/repo"),
        )
    assert str(raised.value) == (
        "cluster east: security.tls.key_password needs file /repo/east.pass, which cannot be "
        f"read ({reason})"
    )


def test_a_file_that_is_not_text_is_named_without_quoting_its_bytes() -> None:
    def read_file(path: Path) -> str:
        return b"\xffsecret".decode("utf-8")

    with pytest.raises(SecretError) as raised:
        resolve(
            "${file:p.bin}",
            cluster="east",
            setting="p",
            environ={},
            read_file=read_file,
            base=Path("/repo"),
        )
    assert str(raised.value) == "cluster east: p needs file /repo/p.bin, which is not UTF-8 text"
    assert "0xff" not in str(raised.value)


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("sasl.jaas.config", True),
        ("ssl.key.password", True),
        ("SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL", True),
        ("basic.auth.user.info.credentials", True),
        ("client.secret", True),
        ("acks", False),
        ("ssl.truststore.location", False),
    ],
)
def test_secret_client_properties_are_recognised_by_name(key: str, secret: bool) -> None:
    assert (SECRET_KEY.search(key) is not None) is secret
