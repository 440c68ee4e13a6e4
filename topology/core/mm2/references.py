"""Secrets between the two worlds: Kafka config-provider references and SASL JAAS lines.

Kafka's ConfigTransformer replaces `${provider:[path:]key}` anywhere in a value, using the
providers declared by `config.providers=<alias>,...` and
`config.providers.<alias>.class=<class>`. Two built-in providers mean what topo's references do:

- EnvVarConfigProvider: `${<alias>:NAME}` (no path) is the environment variable NAME, topo's
  `${env:NAME}`.
- DirectoryConfigProvider: `${<alias>:DIR:FILE}` is the content of the file DIR/FILE, topo's
  `${file:DIR/FILE}`.

FileConfigProvider's `${<alias>:FILE:KEY}` is one key of a properties file; topo has no such
reference, so an import asks for an environment variable instead.
"""

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from topology.core.mm2 import vocabulary

# ConfigTransformer.DEFAULT_PATTERN, \$\{(.*?):((.*?):)?(.*?)\}, with Python's groups named.
KAFKA_REFERENCE = re.compile(r"\$\{(?P<provider>.*?):((?P<path>.*?):)?(?P<key>.*?)\}")
TOPO_REFERENCE = re.compile(r"\$\{(?P<kind>env|file):(?P<name>[^}]+)\}")

ENV_ALIAS = "env"
DIRECTORY_ALIAS = "dir"


def env_name(*parts: str) -> str:
    """`EAST_SASL_PASSWORD` from ("east", "sasl.password"): upper case, non-alphanumerics -> _."""
    name = re.sub(r"[^A-Za-z0-9]", "_", "_".join(parts)).upper()
    return name if not name[:1].isdigit() else f"_{name}"


@dataclass(frozen=True)
class Translation:
    """A Kafka reference as topo writes it, or why it cannot be written (or a caveat)."""

    topo: str | None
    problem: str | None = None


def to_topo(value: str, providers: Mapping[str, str]) -> Translation | None:
    """The topo form of a value that is one whole Kafka reference; None if it is not one."""
    match = KAFKA_REFERENCE.fullmatch(value.strip())
    if match is None:
        return None
    alias, path, key = match["provider"], match["path"] or "", match["key"]
    provider = providers.get(alias)
    if provider is None and alias == ENV_ALIAS and not path:
        # Surely meant as an environment variable, which is what topo's own syntax says.
        return Translation(
            f"${{env:{key}}}",
            "config.providers declares no 'env' provider, so MM2 would use the text "
            "'${env:...}' as it is; topo reads it as the environment variable it names",
        )
    if provider is None:
        return Translation(
            None,
            f"'${{{alias}:...}}' names config provider '{alias}', which config.providers does "
            "not declare, so MM2 uses the text as it is",
        )
    if provider == vocabulary.ENV_PROVIDER and not path:
        return Translation(f"${{env:{key}}}")
    if provider == vocabulary.DIRECTORY_PROVIDER and path:
        joined = key if path in (".", "./") else posixpath.join(path, key)
        return Translation(f"${{file:{joined}}}")
    short = provider.rsplit(".", 1)[-1]
    return Translation(
        None,
        f"topo cannot refer to a value through {short} ('${{{alias}:...}}'); topo reads "
        "secrets from ${env:NAME} or a whole file ${file:path}",
    )


def contains_reference(value: str) -> bool:
    return KAFKA_REFERENCE.search(value) is not None


def to_kafka(value: str) -> str:
    """A value with topo's references rewritten for the providers `providers_used` declares."""

    def rewrite(match: re.Match[str]) -> str:
        if match["kind"] == "env":
            return f"${{{ENV_ALIAS}:{match['name']}}}"
        folder, file = posixpath.split(match["name"])
        return f"${{{DIRECTORY_ALIAS}:{folder or '.'}:{file}}}"

    return TOPO_REFERENCE.sub(rewrite, value)


def providers_used(values: list[str]) -> list[tuple[str, str]]:
    """(alias, class) of every provider the rewritten values need, env first."""
    kinds = {match["kind"] for value in values for match in TOPO_REFERENCE.finditer(value)}
    used = []
    if "env" in kinds:
        used.append((ENV_ALIAS, vocabulary.ENV_PROVIDER))
    if "file" in kinds:
        used.append((DIRECTORY_ALIAS, vocabulary.DIRECTORY_PROVIDER))
    return used


def file_references(value: str) -> list[str]:
    return [match["name"] for match in TOPO_REFERENCE.finditer(value) if match["kind"] == "file"]


# -- SASL JAAS ------------------------------------------------------------------------------

LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_JAAS = re.compile(
    r"\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)"
    r"(?P<options>.*?);?\s*",
    re.DOTALL,
)
_OPTION = re.compile(r'\s*(?P<name>[\w.-]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>\S+))')


@dataclass(frozen=True)
class Jaas:
    module: str
    options: dict[str, str]


def parse_jaas(text: str) -> Jaas | None:
    """One login module entry (what sasl.jaas.config holds), or None if it is not one."""
    match = _JAAS.fullmatch(text)
    if match is None:
        return None
    options: dict[str, str] = {}
    rest = match["options"]
    while rest.strip():
        option = _OPTION.match(rest)
        if option is None:
            return None
        quoted = option["quoted"]
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else option["bare"]
        options[option["name"]] = value
        rest = rest[option.end() :]
    return Jaas(match["module"], options)


def build_jaas(mechanism: str, username: str, password: str) -> str:
    """sasl.jaas.config for PLAIN or SCRAM; references inside are left for ConfigTransformer."""
    return (
        f"{LOGIN_MODULES[mechanism]} required "
        f'username="{_jaas_quote(username)}" password="{_jaas_quote(password)}";'
    )


def _jaas_quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
