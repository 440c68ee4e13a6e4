"""topology.core.kafka_rules: the topic names and bootstrap addresses Kafka accepts."""

import pytest

from topology.core.kafka_rules import (
    MAX_TOPIC_NAME,
    bootstrap_problem,
    is_internal_topic,
    metric_name,
    topic_name_problem,
)


@pytest.mark.parametrize(
    "name", ["orders", "east.orders", "a-b_c.1", "A", "...", "x" * MAX_TOPIC_NAME]
)
def test_legal_topic_names_have_no_problem(name: str) -> None:
    assert topic_name_problem(name) is None


def test_249_characters_is_the_longest_legal_name() -> None:
    assert MAX_TOPIC_NAME == 249
    assert topic_name_problem("x" * 249) is None
    assert topic_name_problem("x" * 250) == (
        f"topic '{'x' * 40}...' is 250 characters; Kafka allows 249"
    )


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_and_dot_dot_are_not_topic_names(name: str) -> None:
    assert topic_name_problem(name) == f"'{name}' is not a legal topic name"


def test_an_empty_topic_name_is_refused_as_empty() -> None:
    assert topic_name_problem("") == "a topic name cannot be empty"


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("bad topic", "' '"),
        ("a/b", "'/'"),
        ("café", "'é'"),
        ("a:b*c", "'*' ':'"),
        ("x" * 300 + "!", "'!'"),  # the characters are named before the length
    ],
)
def test_illegal_characters_are_each_named_once(name: str, bad: str) -> None:
    problem = topic_name_problem(name)
    assert problem is not None
    assert f"has characters Kafka refuses: {bad} (allowed: letters, digits" in problem


def test_metric_names_replace_dots_with_underscores() -> None:
    assert metric_name("east.orders_v1") == "east_orders_v1"
    assert metric_name("east_orders.v1") == metric_name("east.orders.v1")


@pytest.mark.parametrize(
    ("name", "internal"),
    [
        ("__consumer_offsets", True),
        (".hidden", True),
        ("mm2-offsets.internal", True),
        ("connect-internal", True),
        ("orders", False),
        ("_single", False),
        ("internal.orders", False),
    ],
)
def test_internal_topics_follow_mm2s_rule(name: str, internal: bool) -> None:
    assert is_internal_topic(name) is internal


@pytest.mark.parametrize(
    "bootstrap",
    [
        "127.0.0.1:9092",
        "[::1]:9092",
        "[fe80::1]:19092",
        "kafka-1.example.com:9092",
        "kafka_1:9092",  # a Docker Compose service name
        "a:1,b:2, c:3",
        "h:1",
        "h:65535",
    ],
)
def test_well_formed_bootstrap_lists_have_no_problem(bootstrap: str) -> None:
    assert bootstrap_problem(bootstrap) is None


@pytest.mark.parametrize(
    ("bootstrap", "problem"),
    [
        ("kafka", "'kafka' needs a port, as host:port"),
        ("[::1]", "'[::1]' needs a port, as host:port"),
        (":9092", "':9092' needs a port, as host:port"),
        ("PLAINTEXT://h:9092", "'PLAINTEXT://h:9092' has a scheme; write host:port"),
        ("h:0", "'h:0' has an invalid port '0' (1-65535)"),
        ("h:65536", "'h:65536' has an invalid port '65536' (1-65535)"),
        ("h:", "'h:' has an invalid port '' (1-65535)"),
        ("h:-1", "'h:-1' has an invalid port '-1' (1-65535)"),
        ("::1:9092", "'::1:9092' has an invalid host '::1'"),  # IPv6 needs brackets
        ("-h:1", "'-h:1' has an invalid host '-h'"),
        ("h:1,", "an empty address in the list (a stray comma?)"),
        (",h:1", "an empty address in the list (a stray comma?)"),
        ("h:1,,h:2", "an empty address in the list (a stray comma?)"),
        ("h:1,bad", "'bad' needs a port, as host:port"),  # the first bad address of the list
    ],
)
def test_malformed_bootstrap_lists_say_which_address_and_why(bootstrap: str, problem: str) -> None:
    assert (bootstrap_problem(bootstrap) or "").startswith(problem)


def test_ports_are_ascii_digits() -> None:
    fullwidth = "\uff19\uff10\uff19\uff12"  # 9092 in fullwidth digits, which isdigit() accepts
    assert (bootstrap_problem(f"h:{fullwidth}") or "").startswith(
        f"'h:{fullwidth}' has an invalid port"
    )


def test_a_port_of_thousands_of_digits_is_invalid_not_an_exception() -> None:
    port = "9" * 5000  # int() refuses to read more than 4300 digits
    assert f"has an invalid port '{port}'" in (bootstrap_problem(f"h:{port}") or "")
