"""`topo lab up | down | status`: local single-node Kafka clusters for trying topo and tests."""

import json
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from topology.lab.manager import LabStatus

app = typer.Typer(
    help="Local single-node Apache Kafka clusters (KRaft) for trying topo and for tests.",
    no_args_is_help=True,
)


def _progress(line: str) -> None:
    typer.echo(line, err=True)


@app.command()
def up(
    names: Annotated[list[str], typer.Argument(help="Cluster names, e.g. east west.")],
    port: Annotated[
        int | None,
        typer.Option(help="Client port (the controller takes PORT+1); only with one NAME."),
    ] = None,
    sasl: Annotated[
        bool, typer.Option("--sasl", help="SASL/SCRAM-SHA-512 listener, admin user, ACLs on.")
    ] = False,
    tls: Annotated[
        bool, typer.Option("--tls", help="TLS listener with a certificate from the lab CA.")
    ] = False,
    mtls: Annotated[
        bool,
        typer.Option(
            "--mtls",
            help="Clients log in with a certificate from the lab CA (implies --tls); with "
            "--sasl on its own port, PORT+3.",
        ),
    ] = False,
    mechanism: Annotated[
        list[str] | None,
        typer.Option(
            "--mechanism",
            help="SASL mechanism to offer, repeatable: SCRAM-SHA-512 (default), PLAIN, "
            "OAUTHBEARER (Kafka's unsecured test tokens, or with --jwks-url signed ones). "
            "Implies --sasl.",
        ),
    ] = None,
    jwks_url: Annotated[
        str | None,
        typer.Option(
            "--jwks-url",
            help="With --mechanism OAUTHBEARER: accept only tokens signed by the OpenID Connect "
            "provider whose keys are here; a token's sub is its principal.",
        ),
    ] = None,
    user: Annotated[
        list[str] | None,
        typer.Option(
            "--user",
            help="Also make this user (repeatable): a password or certificate, no ACLs.",
        ),
    ] = None,
    kerberos: Annotated[
        bool,
        typer.Option(
            "--kerberos",
            help="SASL GSSAPI with a KDC of the cluster's own (PORT+4, realm NAME.LAB) and a "
            "keytab per user; with --mechanism, offered beside those. Needs MIT Kerberos.",
        ),
    ] = False,
) -> None:
    """Start clusters (running ones are left alone); print `NAME HOST:PORT` for each."""
    from topology.core.errors import TopoError
    from topology.lab import manager
    from topology.lab.spec import KERBEROS_MECHANISM, SCRAM_MECHANISM

    if port is not None and len(names) != 1:
        raise TopoError("--port applies to one cluster; start the others separately")
    asked = [m.upper() for m in mechanism or ([] if kerberos else [SCRAM_MECHANISM])]
    mechanisms = tuple(dict.fromkeys([KERBEROS_MECHANISM] * kerberos + asked))
    sasl = sasl or bool(mechanism) or kerberos
    tls = tls or mtls
    requests = [
        manager.UpRequest(
            n, port, sasl, tls, mtls, mechanisms, tuple(user or ()), jwks_url, kerberos
        )
        for n in names
    ]
    if sasl and "OAUTHBEARER" in mechanisms and jwks_url is None:
        _progress(
            "warning: OAUTHBEARER here is Kafka's unsecured test login: a token names its own "
            "principal and is not signed, so any client can log in as anyone, admin included. "
            "It is for trying the login path, not for protecting the cluster."
        )
    for cluster in manager.up(requests, report=_progress):
        typer.echo(f"{cluster.name} {cluster.bootstrap}")
        if cluster.krb5_conf:
            _progress(
                f"{cluster.name}: Kerberos realm {cluster.realm}; its clients need "
                f"KRB5_CONFIG={cluster.krb5_conf}"
            )


@app.command()
def connect(
    name: Annotated[str, typer.Argument(help="A lab cluster.")],
    user: Annotated[str, typer.Option("--user", help="Log in as this lab user.")] = "admin",
    mechanism: Annotated[
        str | None, typer.Option("--mechanism", help="One of the cluster's SASL mechanisms.")
    ] = None,
    mtls: Annotated[
        bool, typer.Option("--mtls", help="Log in with the user's certificate instead of SASL.")
    ] = False,
) -> None:
    """Print the topology `clusters:` entry that reaches a lab cluster as a user (secrets as
    `${file:...}` references, never values)."""
    from topology.core.mm2 import yaml_out
    from topology.lab import manager

    entry = manager.topology_entry(
        name, user, mechanism=mechanism.upper() if mechanism else None, mtls=mtls or None
    )
    typer.echo(yaml_out.render({name: entry}), nl=False)
    shown = manager.status_of(name)
    if shown.krb5_conf and "sasl.kerberos.keytab" in entry.get("client", {}):
        _progress(f"log in with KRB5_CONFIG={shown.krb5_conf} (the realm {shown.realm})")


@app.command()
def down(
    names: Annotated[
        list[str] | None, typer.Argument(help="Clusters to stop; all when none.")
    ] = None,
    purge: Annotated[bool, typer.Option("--purge", help="Also delete data and logs.")] = False,
) -> None:
    """Stop clusters and free their ports (data is kept unless --purge)."""
    from topology.lab import manager

    stopped = manager.down(names or [], purge=purge, report=_progress)
    if not stopped:
        _progress("no lab clusters")


@app.command()
def status(
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON, as schemas/lab-status.schema.json describes.")
    ] = False,
) -> None:
    """List lab clusters: name, bootstrap, protocol, pid, running."""
    from topology.lab import manager

    clusters = manager.status()
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in clusters], indent=2))
        return
    if not clusters:
        _progress("no lab clusters")
        return
    rows = [("NAME", "BOOTSTRAP", "PROTOCOL", "PID", "RUNNING")] + [
        (c.name, c.bootstrap, _protocol(c), str(c.pid or "-"), "yes" if c.running else "no")
        for c in clusters
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _protocol(cluster: "LabStatus") -> str:
    from topology.lab.spec import security_summary

    return security_summary(
        cluster.security_protocol, cluster.sasl_mechanisms, cluster.mtls_bootstrap
    )
