"""Kerberos (`security.sasl.mechanism: GSSAPI`), as each of topo's clients logs in with it.

A Kerberized cluster's `client:` names the login as librdkafka does: `sasl.kerberos.principal`,
`sasl.kerberos.keytab` and, when the broker's service is not called `kafka`,
`sasl.kerberos.service.name`. topo runs unattended, so it logs in from the keytab, never from a
password or a ticket someone else obtained. librdkafka (plan, apply, status, offsets, failover)
runs `kinit` with the keytab into the process's ticket cache (KRB5CCNAME); the Java client
(the copy slots) logs in with the JDK's Krb5LoginModule from the same keytab. Both find the
realm's KDC in krb5.conf: MIT's library reads KRB5_CONFIG, and the JVMs topo starts are given
the same file as `java.security.krb5.conf`, which the JDK reads instead of that variable.
"""

from collections.abc import Mapping
from typing import Any

from topology.core.model import Sasl, Topology

MECHANISM = "GSSAPI"
PRINCIPAL = "sasl.kerberos.principal"
KEYTAB = "sasl.kerberos.keytab"
SERVICE_NAME = "sasl.kerberos.service.name"
DEFAULT_SERVICE_NAME = "kafka"  # librdkafka's default; Kafka's Java client has none
LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
# librdkafka's settings the Java client does not know: its login is the JAAS line instead.
LIBRDKAFKA_ONLY = (PRINCIPAL, KEYTAB, "sasl.kerberos.kinit.cmd")
CONFIG_VARIABLE = "KRB5_CONFIG"
JAVA_CONFIG_PROPERTY = "java.security.krb5.conf"


def problem(sasl: Sasl, client: Mapping[str, Any]) -> str | None:
    """Why a cluster's Kerberos login cannot work unattended, or None."""
    if sasl.username is not None or sasl.password is not None:
        return (
            "takes no username or password: name the principal and its keytab as client "
            f"properties {PRINCIPAL} and {KEYTAB}"
        )
    missing = [key for key in (PRINCIPAL, KEYTAB) if not str(client.get(key, "")).strip()]
    if missing:
        return (
            f"needs client properties {' and '.join(missing)}: topo logs in from a keytab "
            f"(the principal's keys), as a service does (e.g. {PRINCIPAL}: "
            f"topo@EXAMPLE.COM, {KEYTAB}: /etc/security/keytabs/topo.keytab)"
        )
    return None


def uses_kerberos(topology: Topology) -> bool:
    return any(
        cluster.security.sasl is not None and cluster.security.sasl.mechanism == MECHANISM
        for cluster in topology.clusters.values()
    )


def java_options(topology: Topology, environment: Mapping[str, str]) -> tuple[str, ...]:
    """The system properties topo's JVMs (the copy slots') need for this topology's Kerberos
    logins: the krb5.conf MIT's library reads (KRB5_CONFIG), when one is set. MIT's library
    takes a list of files (`a:b`); the JDK reads one, the first."""
    config = environment.get(CONFIG_VARIABLE, "").split(":", 1)[0].strip()
    if not config or not uses_kerberos(topology):
        return ()
    option = f"-D{JAVA_CONFIG_PROPERTY}={config}"
    # Spark splits Java options at white space, except inside double quotes.
    return (f'"{option}"' if any(c.isspace() for c in option) else option,)


def login_options(keytab: str, principal: str) -> dict[str, str]:
    """The options of a Java JAAS line logging `principal` in from `keytab` (Krb5LoginModule):
    a client's, MM2's, the lab broker's."""
    return {"useKeyTab": "true", "storeKey": "true", "keyTab": keytab, "principal": principal}


def client_login_options(librdkafka: Mapping[str, str]) -> dict[str, str]:
    """`login_options` from a cluster's client settings (librdkafka's keytab and principal):
    the copy slots' and MM2's."""
    return login_options(librdkafka.get(KEYTAB, ""), librdkafka.get(PRINCIPAL, ""))


def service_name(librdkafka: Mapping[str, str]) -> str:
    """The broker's Kerberos service name (Kafka's Java client has no default for it)."""
    return librdkafka.get(SERVICE_NAME, "").strip() or DEFAULT_SERVICE_NAME
