"""What an import collects while it reads: diagnostics, environment variables, dropped names.

Secrets pass through `Context.secret`, the one place that decides what a secret becomes in the
topology: a reference the user already had (translated to topo's syntax), or a new `${env:NAME}`.
A secret's value is never put into a message, a note or the topology.
"""

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from topology.core.diagnostics import Diagnostic, Severity, Span, error, in_file_order, warning
from topology.core.mm2 import references
from topology.core.mm2.properties import Property


@dataclass(frozen=True)
class EnvVar:
    """An environment variable the imported topology reads."""

    name: str
    purpose: str  # "cluster east: SASL password (was in east.sasl.jaas.config)"
    generated: bool  # True when the import made it up; False when the properties named it


class Context:
    def __init__(
        self,
        file: str,
        providers: Mapping[str, str],
        line_name: Callable[[int], str] = "line {}".format,
    ) -> None:
        self.file = file
        self.providers = providers
        self.line_name = line_name  # how a message names a line ("line 8", "cp.json line 3")
        self.diagnostics: list[Diagnostic] = []
        self.env_vars: dict[str, EnvVar] = {}
        self.not_imported: list[Property] = []  # dropped with a warning; the header lists them

    def span(self, where: Property | None) -> Span:
        if where is None:
            return Span(self.file, 1, 1)
        return Span(self.file, where.line, where.column)

    def error(self, code: str, message: str, where: Property | None) -> None:
        self.diagnostics.append(error(code, brief(message), self.span(where)))

    def warn(
        self, code: str, message: str, where: Property | None, *, secret: bool = False
    ) -> None:
        self.diagnostics.append(warning(code, brief(message), self.span(where), secret=secret))

    def drop(self, code: str, message: str, where: Property) -> None:
        """Warn that a property is not imported, and list it in the output's header."""
        self.warn(code, message, where)
        self.not_imported.append(where)

    def value(self, cluster: str, setting: str, raw: str, where: Property) -> str:
        """A non-secret value; a whole Kafka reference in it becomes topo's, if it can."""
        translated = references.to_topo(raw, self.providers)
        if translated is None:
            return raw
        if translated.topo is not None:
            return self._kept(translated, cluster, setting, where)
        return self._generated(cluster, setting, where, translated.problem)

    def secret(self, cluster: str, setting: str, raw: str, where: Property) -> str:
        """A secret as the topology holds it: a reference, never the value itself."""
        translated = references.to_topo(raw, self.providers)
        if translated is not None and translated.topo is not None:
            return self._kept(translated, cluster, setting, where)
        problem = translated.problem if translated is not None else None
        if problem is None and references.contains_reference(raw):
            problem = "it mixes a config-provider reference with other text"
        written = self._generated(cluster, setting, where, problem)
        if problem is None and raw.strip():
            self._not_copied(setting, where, written)
        return written

    def _not_copied(self, setting: str, where: Property, written: str) -> None:
        """Say that a secret written in the properties stays out of the topology, and which
        variable takes its place (M021; the line, which holds the secret, is not shown)."""
        name = written.removeprefix("${env:").removesuffix("}")
        if where.key == setting or where.key.endswith(f".{setting}"):
            what = f"{where.key} looks like a secret, so its value"
        else:
            what = f"{where.key}: {_SECRET_PARTS.get(setting, setting)} in it is a secret, so it"
        self.warn(
            "M021",
            f"{what} is not copied: the topology reads ${{env:{name}}} instead; set {name} to "
            "it where topo runs",
            where,
            secret=True,
        )

    def _kept(
        self, translated: references.Translation, cluster: str, setting: str, where: Property
    ) -> str:
        assert translated.topo is not None
        if translated.problem is not None:
            self.warn("M014", f"{where.key}: {translated.problem}", where)
        self._note_reference(translated.topo, cluster, setting)
        return translated.topo

    def _generated(self, cluster: str, setting: str, where: Property, problem: str | None) -> str:
        name = self._free_name(references.env_name(cluster, setting))
        purpose = brief(
            f"cluster {cluster}: {setting} (was {where.key}, {self.line_name(where.line)})"
        )
        self.env_vars[name] = EnvVar(name, purpose, generated=True)
        if problem is not None:
            self.warn(
                "M014",
                f"{where.key}: {problem}; the topology reads ${{env:{name}}} instead, so set "
                f"{name} to the value it refers to",
                where,
            )
        return f"${{env:{name}}}"

    def _free_name(self, wanted: str) -> str:
        name, number = wanted, 2
        while name in self.env_vars:
            name, number = f"{wanted}_{number}", number + 1
        return name

    def _note_reference(self, topo: str, cluster: str, setting: str) -> None:
        match = references.TOPO_REFERENCE.fullmatch(topo)
        if match and match["kind"] == "env" and match["name"] not in self.env_vars:
            name = match["name"]
            self.env_vars[name] = EnvVar(name, f"cluster {cluster}: {setting}", generated=False)


# What a secret taken from a bigger value (a JAAS line) is, in a message.
_SECRET_PARTS = {
    "sasl.password": "the password",
    "sasl.oauthbearer.client.id": "the client id (clientId)",
    "sasl.oauthbearer.client.secret": "the client secret (clientSecret)",
}


# -- keeping output readable ----------------------------------------------------------------

_LONG_WORD = re.compile(r"\S{101,}")
_LONGEST_MESSAGE = 1000


def brief(text: str) -> str:
    """The text with any run of over 100 non-blank characters (a megabyte property name or
    value quoted in a message) cut to its start and its length, and at most 1000 characters."""
    if len(text) <= 100:  # nothing to cut: the usual message
        return text
    text = _LONG_WORD.sub(lambda match: f"{match[0][:60]}...({len(match[0])} characters)", text)
    if len(text) > _LONGEST_MESSAGE:
        text = f"{text[:_LONGEST_MESSAGE]}...({len(text)} characters)"
    return text


SHOWN_PER_CODE = 100


def folded(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """What to print: the first SHOWN_PER_CODE diagnostics of each code, then one that counts
    the rest, so a file of 200,000 unknown properties is not 200,000 warnings on the screen."""
    seen: Counter[tuple[Severity, str]] = Counter()
    shown: list[Diagnostic] = []
    rest: dict[tuple[Severity, str], list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        kind = (diagnostic.severity, diagnostic.code)
        seen[kind] += 1
        if seen[kind] <= SHOWN_PER_CODE:
            shown.append(diagnostic)
        else:
            rest.setdefault(kind, []).append(diagnostic)
    for (severity, code), more in rest.items():
        lines = f"line {more[0].span.line}" + (
            f" to line {more[-1].span.line}" if len(more) > 1 else ""
        )
        message = (
            f"{len(more)} more {severity.value}s like the {code} ones above ({lines}), not "
            "shown one by one"
        )
        secret = any(d.secret for d in more)
        shown.append(Diagnostic(severity, code, message, more[0].span, secret=secret))
    return in_file_order(shown)
