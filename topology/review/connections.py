"""Which clusters a pull request connects to differently: pure, over two resolved topologies.

`topo plan` on the pull request's version connects where that version says, with the job's
credentials. A pull request that points a cluster's `bootstrap` at a host it controls, turns
its protocol to SASL_PLAINTEXT and names `${env:ANY_JOB_VARIABLE}` as its password would
receive that value in clear. So the review plans a version whose connection settings
(bootstrap, security, client properties, the secret references among them) differ from the
base branch's only when a maintainer allows it.
"""

from topology.core.model import Cluster, Topology


def changed(base: Topology | None, head: Topology) -> tuple[str, ...]:
    """Each cluster of `head` that connects differently than in `base`, as `name (what)`;
    `base` None (a new file, or a base version that does not resolve) makes every one new."""
    found = []
    for name, cluster in head.clusters.items():
        before = base.clusters.get(name) if base is not None else None
        if before is None:
            found.append(f"{name} (new)")
            continue
        what = _differences(before, cluster)
        if what:
            found.append(f"{name} ({', '.join(what)})")
    return tuple(found)


def _differences(before: Cluster, after: Cluster) -> list[str]:
    what = []
    if before.bootstrap != after.bootstrap:
        what.append("bootstrap")
    if before.security != after.security:
        what.append("security")
    if dict(before.client) != dict(after.client):
        what.append("client")
    return what
