"""librdkafka settings for one cluster of a resolved topology: the only place secrets are read.

Pure: no client is created here. Every value that may be a secret reference (`${env:NAME}`,
`${file:path}`) goes through `secrets.resolve`, so a missing variable is one error naming the
cluster and the setting, raised before anything connects.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from topology.core import admin_plane, kerberos, model, msk_iam, secrets
from topology.core.errors import TopoError


@dataclass(frozen=True)
class StoreContents:
    """What a JKS or PKCS#12 store holds, as PEM text kept in memory."""

    certificates: str  # every certificate of a trust store; a key store's key's chain, leaf first
    key: str | None  # a key store's private key, unencrypted PKCS#8


# Reads a key store: (path, its type or None, password, key password, whether its key is wanted).
ReadStore = Callable[[Path, str | None, str | None, str | None, bool], StoreContents]


def _no_store_reader(path: Path, *_: object) -> StoreContents:
    raise TopoError(f"key store {path}: this command reads no key stores")


def _read_text(path: Path) -> str:
    """A secret, certificate or key file: a small regular file, read with a bound."""
    return secrets.read_secret_file(path)


def client_config(
    cluster: model.Cluster,
    environ: Mapping[str, str],
    *,
    read_file: Callable[[Path], str] = _read_text,
    read_store: ReadStore = _no_store_reader,
    base: Path = Path(),
) -> dict[str, str]:
    """librdkafka settings to reach `cluster`; relative paths are relative to `base`. A JKS or
    PKCS#12 store is read (`read_store`) into the PEM text librdkafka takes in memory.

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

    config = {
        key: resolved(property_text(value), f"client.{key}")
        for key, value in cluster.client.items()
    }
    if kerberos.KEYTAB in config:  # a path, relative to the topology file as TLS files are
        config[kerberos.KEYTAB] = str(_under(base, config[kerberos.KEYTAB]))
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
        for kind, store in tls.stores():
            setting = f"security.tls.{kind}"
            password = store.password and resolved(store.password, f"{setting}.password")
            key_password = store.key_password and resolved(
                store.key_password, f"{setting}.key_password"
            )
            contents = read_store(
                _under(base, store.path), store.type, password, key_password, kind == "keystore"
            )
            if contents.key is None:
                config["ssl.ca.pem"] = contents.certificates
            else:
                config["ssl.certificate.pem"] = contents.certificates
                config["ssl.key.pem"] = contents.key
        config["ssl.endpoint.identification.algorithm"] = "https" if tls.verify_hostname else "none"
    admin = admin_plane.translate(cluster.roles.get("admin", {})).settings
    config |= {ADMIN_PREFIX + key: value for key, value in admin.items()}
    return config


# The cluster's `admin:` settings, as librdkafka's admin client takes them, ride in its settings
# under this prefix (no librdkafka or Java client setting has it): `kafka.client.quiet` gives
# them to admin clients only, and `java_client_config` leaves them out.
ADMIN_PREFIX = "topo.admin."


def for_client(config: Mapping[str, str], *, admin: bool) -> dict[str, str]:
    """One client's settings from a cluster's: an admin client's with its `admin:` settings
    over the others, any other client's without them."""
    found = {key: value for key, value in config.items() if not key.startswith(ADMIN_PREFIX)}
    if admin:
        found |= {
            key.removeprefix(ADMIN_PREFIX): value
            for key, value in config.items()
            if key.startswith(ADMIN_PREFIX)
        }
    return found


def property_text(value: str | int | float | bool) -> str:
    """A client property as Kafka's clients read it: booleans are `true` / `false`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _under(base: Path, path: str) -> Path:
    found = Path(path).expanduser()
    return found if found.is_absolute() else base / found


# librdkafka's OAUTHBEARER settings: the Java client's login is a JAAS line and a handler.
OAUTHBEARER_LIBRDKAFKA_ONLY = (
    "enable.sasl.oauthbearer.unsecure.jwt",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.extensions",
)
# librdkafka's names for what the Java client (Spark's Kafka connector) spells differently, or
# does not know: they are translated below, never passed on.
_LIBRDKAFKA_ONLY = {
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.ca.pem",
    "ssl.certificate.pem",
    "ssl.key.pem",
    "ssl.endpoint.identification.algorithm",
    *OAUTHBEARER_LIBRDKAFKA_ONLY,
    *kerberos.LIBRDKAFKA_ONLY,
}
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
# Kafka's JAAS login module for each SASL mechanism (the lab's brokers use them too).
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": OAUTH_MODULE,
}
OAUTH_LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


class JavaClientError(TopoError):
    """A cluster's settings that Spark's Java Kafka client cannot be given."""


def java_client_config(
    librdkafka: Mapping[str, str], *, read_file: Callable[[Path], str] = _read_text
) -> dict[str, str]:
    """The Java client's settings for a cluster, from its librdkafka settings (secrets already
    resolved). Every login topo validates is translated: SASL credentials, OAUTHBEARER and
    Kerberos become a JAAS line, a CA file a PEM trust store, a client certificate and key
    (mutual TLS) a PEM key store given inline, so no file holding a key is written anywhere."""
    config = {
        k: v
        for k, v in librdkafka.items()
        if k not in _LIBRDKAFKA_ONLY and not k.startswith(ADMIN_PREFIX)
    }
    mechanism = librdkafka.get("sasl.mechanism", "")
    if mechanism != "OAUTHBEARER" and mechanism in LOGIN_MODULES and "sasl.username" in librdkafka:
        options = {
            "username": librdkafka["sasl.username"],
            "password": librdkafka.get("sasl.password", ""),
        }
        config["sasl.jaas.config"] = jaas_line(LOGIN_MODULES[mechanism], options)
    if mechanism == "OAUTHBEARER":
        config |= oauthbearer_java_login(librdkafka)
    if mechanism == msk_iam.MECHANISM:
        config |= msk_iam.java_login()
    if mechanism == kerberos.MECHANISM:
        config["sasl.jaas.config"] = jaas_line(
            kerberos.LOGIN_MODULE, kerberos.client_login_options(librdkafka)
        )
        config[kerberos.SERVICE_NAME] = kerberos.service_name(librdkafka)
    if "ssl.ca.location" in librdkafka:
        config["ssl.truststore.type"] = "PEM"
        config["ssl.truststore.location"] = librdkafka["ssl.ca.location"]
    if "ssl.ca.pem" in librdkafka:  # a trust store read into memory
        config["ssl.truststore.type"] = "PEM"
        config["ssl.truststore.certificates"] = librdkafka["ssl.ca.pem"]
    if "ssl.certificate.location" in librdkafka:
        config |= _key_store(librdkafka, read_file)
    if "ssl.key.pem" in librdkafka:  # a key store read into memory
        config["ssl.keystore.type"] = "PEM"
        config["ssl.keystore.certificate.chain"] = librdkafka["ssl.certificate.pem"]
        config["ssl.keystore.key"] = librdkafka["ssl.key.pem"]
    if librdkafka.get("ssl.endpoint.identification.algorithm") == "none":
        config["ssl.endpoint.identification.algorithm"] = ""
    return config


# librdkafka's `sasl.oauthbearer.config` words for unsecured tokens -> the options of Kafka's
# OAuthBearerLoginModule (OAuthBearerUnsecuredLoginCallbackHandler).
_UNSECURED_OPTIONS = {
    "principal": "unsecuredLoginStringClaim_sub",
    "principalClaimName": "unsecuredLoginPrincipalClaimName",
    "scopeClaimName": "unsecuredLoginScopeClaimName",
    "lifeSeconds": "unsecuredLoginLifetimeSeconds",
}


def oauthbearer_java_login(librdkafka: Mapping[str, str]) -> dict[str, str]:
    """OAUTHBEARER for the Java client (the copy slots', MM2's): Kafka's unsecured test tokens,
    or OIDC client credentials against a token endpoint (validate refuses anything else), from
    librdkafka's settings; the endpoint's URL has one name in both. SASL extensions (Confluent
    Cloud's logicalCluster, say) are carried over in both forms."""
    if librdkafka.get("sasl.oauthbearer.method", "default").lower() == "oidc":
        options = {
            "clientId": librdkafka.get("sasl.oauthbearer.client.id", ""),
            "clientSecret": librdkafka.get("sasl.oauthbearer.client.secret", ""),
        }
        if "sasl.oauthbearer.scope" in librdkafka:
            options["scope"] = librdkafka["sasl.oauthbearer.scope"]
        for pair in librdkafka.get("sasl.oauthbearer.extensions", "").split(","):
            name, _, value = pair.partition("=")
            if name.strip():
                options[f"extension_{name.strip()}"] = value.strip()
        return {
            "sasl.login.callback.handler.class": OAUTH_LOGIN_HANDLER,
            "sasl.jaas.config": jaas_line(OAUTH_MODULE, options),
        }
    options = {}
    for word in librdkafka.get("sasl.oauthbearer.config", "").split():
        name, _, value = word.partition("=")
        if name in _UNSECURED_OPTIONS:
            options[_UNSECURED_OPTIONS[name]] = value
        elif name == "scope":
            # Kafka reads a list claim's first character as its delimiter.
            options["unsecuredLoginListClaim_scope"] = "," + value
        elif name.startswith("extension_"):
            options[f"unsecuredLoginExtension_{name[len('extension_') :]}"] = value
    return {"sasl.jaas.config": jaas_line(OAUTH_MODULE, options)}


def _key_store(librdkafka: Mapping[str, str], read_file: Callable[[Path], str]) -> dict[str, str]:
    """A client certificate and key as the Java client's inline PEM key store."""
    certificate_file = Path(librdkafka["ssl.certificate.location"])
    key_file = Path(librdkafka.get("ssl.key.location", ""))
    try:
        certificate, key = read_file(certificate_file), read_file(key_file)
    except (OSError, UnicodeDecodeError) as problem:
        shown = (
            getattr(problem, "reason", None)
            or getattr(problem, "strerror", None)
            or type(problem).__name__
        )
        raise JavaClientError(
            f"the client certificate {certificate_file} or its key {key_file} cannot be read "
            f"({shown})"
        ) from None
    if "-----BEGIN PRIVATE KEY-----" not in key and "-----BEGIN ENCRYPTED PRIVATE KEY" not in key:
        raise JavaClientError(
            f"the client key {key_file} is not a PKCS#8 PEM key, the only form Spark's Java "
            "Kafka client reads; convert it with `openssl pkcs8 -topk8 -nocrypt -in KEY -out "
            "KEY.p8` (or -v2 aes-256-cbc to encrypt it, with tls.key_password)"
        )
    store = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": certificate.strip(),
        "ssl.keystore.key": key.strip(),
    }
    if "ENCRYPTED PRIVATE KEY" in key and "ssl.key.password" in librdkafka:
        store["ssl.key.password"] = librdkafka["ssl.key.password"]
    return store


def jaas_line(module: str, options: Mapping[str, str]) -> str:
    """`<module> required name="value" ...;`, each value quoted as JAAS reads it."""
    written = "".join(f' {name}="{_jaas_quoted(value)}"' for name, value in options.items())
    return f"{module} required{written};"


def _jaas_quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
