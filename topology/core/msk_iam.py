"""Amazon MSK's IAM login (`security.sasl.mechanism: AWS_MSK_IAM`), as each of topo's clients
makes it.

MSK authenticates a client by a request it signs with AWS credentials (SigV4, the action
`kafka-cluster:Connect`), which the machine's usual AWS chain provides (environment, profile,
instance or pod role): never the topology. The Java client (the copy slots) makes it with
Amazon's `aws-msk-iam-auth` library, as MSK's own documentation configures MM2; librdkafka
(plan, apply, status) sends the same signed request as an OAUTHBEARER token, made by Amazon's
`aws-msk-iam-sasl-signer-python`. Both need the cluster's region: from its bootstrap host
names (MSK's end in `.kafka.<region>.amazonaws.com`), else `AWS_REGION`.
"""

import re
from collections.abc import Mapping
from typing import Any

from topology.core.model import Sasl, Topology

MECHANISM = "AWS_MSK_IAM"
LOGIN_MODULE = "software.amazon.msk.auth.iam.IAMLoginModule"
CALLBACK_HANDLER = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
# The Maven artifact set (topology/resources/maven) with Amazon's library, for the copy slots.
JARS = "aws-msk-iam"
_REGION_IN_HOST = re.compile(r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com")


def problem(protocol: str, sasl: Sasl, client: Mapping[str, Any]) -> str | None:
    """Why a cluster's MSK IAM login cannot work, or None."""
    if protocol != "SASL_SSL":
        return f"needs protocol SASL_SSL (MSK takes IAM logins over TLS only), not {protocol}"
    if sasl.username is not None or sasl.password is not None:
        return (
            "takes no username or password: the signed request uses the machine's AWS "
            "credentials (environment, profile or role); leave them out"
        )
    written = sorted(key for key in client if key.startswith("sasl.oauthbearer"))
    if written:
        return f"makes its own tokens; leave out {', '.join(written)}"
    return None


def region(bootstrap: str, environment: Mapping[str, str]) -> str | None:
    """The AWS region of an MSK cluster: from its bootstrap host names, else the environment's
    AWS_REGION or AWS_DEFAULT_REGION, else None."""
    found = _REGION_IN_HOST.search(bootstrap.lower())
    if found:
        return found[1]
    return environment.get("AWS_REGION") or environment.get("AWS_DEFAULT_REGION") or None


def jar_sets(topology: Topology) -> tuple[str, ...]:
    """The Maven artifact sets the copy slots need for this topology's MSK IAM logins."""
    used = any(
        cluster.security.sasl is not None and cluster.security.sasl.mechanism == MECHANISM
        for cluster in topology.clusters.values()
    )
    return (JARS,) if used else ()


def java_login() -> dict[str, str]:
    """The Java client's settings for the login (with Amazon's library on its classpath)."""
    return {
        "sasl.mechanism": MECHANISM,
        "sasl.jaas.config": f"{LOGIN_MODULE} required;",
        "sasl.client.callback.handler.class": CALLBACK_HANDLER,
    }
