"""librdkafka settings for one cluster of a resolved topology: the only place secrets are read.

Pure: no client is created here. Every value that may be a secret reference (`${env:NAME}`,
`${file:path}`) goes through `secrets.resolve`, so a missing variable is one error naming the
cluster and the setting, raised before anything connects.
"""

from collections.abc import Callable, Mapping
from pathlib import Path

from topology import model, secrets


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def client_config(
    cluster: model.Cluster,
    environ: Mapping[str, str],
    *,
    read_file: Callable[[Path], str] = _read_text,
    base: Path = Path(),
) -> dict[str, str]:
    """librdkafka settings to reach `cluster`; relative paths are relative to `base`.

    The cluster's `client` properties come first, so the settings topo derives from
    `bootstrap` and `security` win over a pass-through property of the same name.
    """

    def resolved(value: str, setting: str) -> str:
        return secrets.resolve(
            value,
            cluster=cluster.name,
            setting=setting,
            environ=environ,
            read_file=read_file,
            base=base,
        )

    config = {key: resolved(_text(value), f"client.{key}") for key, value in cluster.client.items()}
    config["bootstrap.servers"] = resolved(cluster.bootstrap, "bootstrap")
    security = cluster.security
    config["security.protocol"] = security.protocol
    sasl = security.sasl
    if sasl is not None:
        config["sasl.mechanism"] = sasl.mechanism
        if sasl.username is not None:
            config["sasl.username"] = resolved(sasl.username, "security.sasl.username")
        if sasl.password is not None:
            config["sasl.password"] = resolved(sasl.password, "security.sasl.password")
    tls = security.tls
    if tls is None and security.protocol.endswith("SSL"):
        tls = model.Tls()  # SSL without a tls block: the system's trust store, hostnames checked
    if tls is not None:
        files = {
            "ssl.ca.location": tls.ca,
            "ssl.certificate.location": tls.cert,
            "ssl.key.location": tls.key,
        }
        for setting, path in files.items():
            if path is not None:
                config[setting] = str(_under(base, path))
        if tls.key_password is not None:
            config["ssl.key.password"] = resolved(tls.key_password, "security.tls.key_password")
        config["ssl.endpoint.identification.algorithm"] = "https" if tls.verify_hostname else "none"
    return config


def _text(value: str | int | float | bool) -> str:
    """A client property as librdkafka reads it: booleans are `true` / `false`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _under(base: Path, path: str) -> Path:
    found = Path(path).expanduser()
    return found if found.is_absolute() else base / found


# librdkafka's names for what the Java client (Spark's Kafka connector) spells differently.
_LIBRDKAFKA_ONLY = {
    "sasl.username", "sasl.password", "ssl.ca.location", "ssl.certificate.location",
    "ssl.key.location", "ssl.key.password", "ssl.endpoint.identification.algorithm",
}  # fmt: skip
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def java_client_config(librdkafka: Mapping[str, str]) -> dict[str, str]:
    """The Java client's settings for a cluster, from its librdkafka settings (secrets already
    resolved): SASL credentials become a JAAS line, a CA file a PEM trust store. Client
    certificates (mutual TLS) are passed through as librdkafka names and not translated."""
    config = {k: v for k, v in librdkafka.items() if k not in _LIBRDKAFKA_ONLY}
    module = _LOGIN_MODULES.get(librdkafka.get("sasl.mechanism", ""))
    if module is not None and "sasl.username" in librdkafka:
        user = _jaas_quoted(librdkafka["sasl.username"])
        password = _jaas_quoted(librdkafka.get("sasl.password", ""))
        config["sasl.jaas.config"] = f'{module} required username="{user}" password="{password}";'
    if "ssl.ca.location" in librdkafka:
        config["ssl.truststore.type"] = "PEM"
        config["ssl.truststore.location"] = librdkafka["ssl.ca.location"]
    if librdkafka.get("ssl.endpoint.identification.algorithm") == "none":
        config["ssl.endpoint.identification.algorithm"] = ""
    return config


def _jaas_quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
