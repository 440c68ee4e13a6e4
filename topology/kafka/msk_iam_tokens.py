"""Amazon MSK IAM tokens for librdkafka: its OAUTHBEARER login, with a token Amazon's signer
makes from the machine's AWS credentials (`topology.core.msk_iam` says how each client logs in).

The signer is `aws-msk-iam-sasl-signer-python`, installed with `pip install 'topo[aws]'`. The
first token is made when the client is, so missing credentials or region are one error line
naming the cluster, not a client that retries forever.
"""

import functools
import importlib
import os
from collections.abc import Callable
from typing import Any

from topology.core import msk_iam
from topology.core.errors import ToolMissingError, TopoError

TokenCallback = Callable[[str], tuple[str, float]]


def with_token_callback(settings: dict[str, Any]) -> dict[str, Any]:
    """A librdkafka client's settings for an MSK IAM cluster: OAUTHBEARER, with Amazon's
    signer as its token callback (`oauth_cb`). Other settings are returned as they are."""
    if settings.get("sasl.mechanism") != msk_iam.MECHANISM:
        return settings
    bootstrap = settings.get("bootstrap.servers", "")
    return {**settings, "sasl.mechanism": "OAUTHBEARER", "oauth_cb": token_callback(bootstrap)}


@functools.lru_cache(maxsize=64)
def token_callback(bootstrap: str) -> TokenCallback:
    """The token callback for an MSK cluster, checked once per process by making a token."""
    region = msk_iam.region(bootstrap, os.environ)
    if region is None:
        raise TopoError(
            f"MSK IAM login to {bootstrap}: no AWS region (its host names do not say one); set "
            "AWS_REGION where topo runs"
        )
    try:
        signer = importlib.import_module("aws_msk_iam_sasl_signer.MSKAuthTokenProvider")
    except ImportError:
        raise ToolMissingError(
            "MSK IAM logins need Amazon's signer: pip install 'topo[aws]' "
            "(aws-msk-iam-sasl-signer-python)"
        ) from None

    def token(_config: str) -> tuple[str, float]:
        value, expiry_ms = signer.generate_auth_token(region)
        return value, expiry_ms / 1000

    try:
        token("")
    except AttributeError:  # the signer's way of saying the chain found no credentials
        raise TopoError(
            f"MSK IAM login to {bootstrap}: no AWS credentials found; give topo some the usual "
            "way (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance or "
            "pod role)"
        ) from None
    except Exception as problem:  # botocore's: a profile that is not there, an expired token...
        raise TopoError(
            f"MSK IAM login to {bootstrap}: no token from the machine's AWS credentials "
            f"({type(problem).__name__}: {problem})"
        ) from None
    return token
