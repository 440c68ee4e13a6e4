"""Amazon MSK's IAM login: validated, made by Amazon's signer for librdkafka (a real signed
token, from credentials in the environment), written for the Java client and MM2, imported from
MSK's documented client properties."""

import base64
import urllib.parse
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from tests.mm2.normal import exported, imported, normal, topology_of
from topology.core import connection, msk_iam
from topology.core.analysis import analyse
from topology.core.errors import TopoError
from topology.core.mm2.importer import import_properties
from topology.kafka import msk_iam_tokens

BOOTSTRAP = "b-1.orders.a1b2c3.c2.kafka.eu-west-1.amazonaws.com:9098"
TOPOLOGY = f"""\
version: 1
clusters:
  msk:
    bootstrap: {BOOTSTRAP}
    security:
      protocol: SASL_SSL
      sasl: {{mechanism: AWS_MSK_IAM}}
  dc: {{bootstrap: "dc-1:9092"}}
flows:
  - mirror: {{from: dc, to: msk}}
"""


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Credentials in the environment, and nothing else of the chain (no files, no instance
    metadata), as AWS's own examples spell them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    msk_iam_tokens.token_callback.cache_clear()
    return "AKIAIOSFODNN7EXAMPLE"


def _errors(text: str) -> list[str]:
    return [d.message for d in analyse(text, "t.yaml").diagnostics if d.severity.value == "error"]


def test_an_msk_iam_cluster_validates_and_a_wrong_one_is_one_error_at_the_mechanism() -> None:
    assert _errors(TOPOLOGY) == []
    plaintext = TOPOLOGY.replace("SASL_SSL", "SASL_PLAINTEXT")
    assert _errors(plaintext) == [
        "cluster msk: SASL AWS_MSK_IAM needs protocol SASL_SSL (MSK takes IAM logins over TLS "
        "only), not SASL_PLAINTEXT"
    ]
    with_password = TOPOLOGY.replace(
        "{mechanism: AWS_MSK_IAM}", '{mechanism: AWS_MSK_IAM, username: u, password: "${env:P}"}'
    )
    [problem] = _errors(with_password)
    assert "takes no username or password" in problem
    with_oidc = TOPOLOGY.replace(
        '  dc: {bootstrap: "dc-1:9092"}',
        "    client: {sasl.oauthbearer.method: oidc}\n  dc: {bootstrap: 'dc-1:9092'}",
    )
    [problem] = _errors(with_oidc)
    assert "leave out sasl.oauthbearer.method" in problem


@pytest.mark.parametrize(
    ("bootstrap", "environment", "region"),
    [
        (BOOTSTRAP, {}, "eu-west-1"),
        ("boot-abc.c1.kafka-serverless.us-east-2.amazonaws.com:9098", {}, "us-east-2"),
        ("B-2.X.C3.KAFKA.AP-SOUTHEAST-1.AMAZONAWS.COM:9098", {}, "ap-southeast-1"),
        ("kafka.internal:9098", {"AWS_REGION": "ca-central-1"}, "ca-central-1"),
        ("kafka.internal:9098", {"AWS_DEFAULT_REGION": "sa-east-1"}, "sa-east-1"),
        ("kafka.internal:9098", {}, None),
    ],
)
def test_the_region_comes_from_msks_host_names_else_the_environment(
    bootstrap: str, environment: dict[str, str], region: str | None
) -> None:
    assert msk_iam.region(bootstrap, environment) == region


def test_librdkafka_logs_in_with_a_token_amazons_signer_makes(aws_credentials: str) -> None:
    config = connection.client_config(topology_of(TOPOLOGY).clusters["msk"], {})
    assert config["sasl.mechanism"] == "AWS_MSK_IAM"
    settings = msk_iam_tokens.with_token_callback(connection.for_client(config, admin=True))
    assert settings["sasl.mechanism"] == "OAUTHBEARER"
    token, expires = settings["oauth_cb"]("")
    # The token is the signed request MSK checks: kafka-cluster:Connect, in the cluster's
    # region, with the credentials the chain found.
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query))
    assert parts.netloc == "kafka.eu-west-1.amazonaws.com"
    assert query["Action"] == "kafka-cluster:Connect"
    assert query["X-Amz-Credential"].startswith(f"{aws_credentials}/")
    assert "/eu-west-1/kafka-cluster/aws4_request" in query["X-Amz-Credential"]
    assert len(query["X-Amz-Signature"]) == 64
    assert expires > 0
    # librdkafka takes the settings as they are: the callback, OAUTHBEARER, over TLS.
    AdminClient(settings)


def test_without_credentials_or_region_the_login_is_one_error_line(
    aws_credentials: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(TopoError, match="no AWS credentials found") as raised:
        msk_iam_tokens.with_token_callback(
            {"sasl.mechanism": "AWS_MSK_IAM", "bootstrap.servers": BOOTSTRAP}
        )
    assert "\n" not in str(raised.value)
    with pytest.raises(TopoError, match="set AWS_REGION"):
        msk_iam_tokens.with_token_callback(
            {"sasl.mechanism": "AWS_MSK_IAM", "bootstrap.servers": "kafka.internal:9098"}
        )


def test_other_logins_are_left_as_they_are() -> None:
    settings = {"sasl.mechanism": "SCRAM-SHA-512", "bootstrap.servers": "a:1"}
    assert msk_iam_tokens.with_token_callback(settings) is settings


def test_the_java_client_and_mm2_get_amazons_login_module() -> None:
    config = connection.client_config(topology_of(TOPOLOGY).clusters["msk"], {})
    java = connection.java_client_config(config)
    assert java["sasl.mechanism"] == "AWS_MSK_IAM"
    assert java["sasl.jaas.config"] == "software.amazon.msk.auth.iam.IAMLoginModule required;"
    assert java["sasl.client.callback.handler.class"].endswith("IAMClientCallbackHandler")
    properties = exported(TOPOLOGY)
    assert "msk.sasl.mechanism = AWS_MSK_IAM" in properties
    assert (
        "msk.sasl.jaas.config = software.amazon.msk.auth.iam.IAMLoginModule required;" in properties
    )
    assert normal(topology_of(imported(properties))) == normal(topology_of(TOPOLOGY))


# MSK's documented client properties for IAM, both forms (the MSK developer guide's "Configure
# clients for IAM access control"), and one with a named profile.
AS_IAM = """\
msk.sasl.mechanism = AWS_MSK_IAM
msk.sasl.jaas.config = software.amazon.msk.auth.iam.IAMLoginModule required;
msk.sasl.client.callback.handler.class = software.amazon.msk.auth.iam.IAMClientCallbackHandler
"""
_MSK = "software.amazon.msk.auth.iam."
AS_OAUTHBEARER = (
    "msk.sasl.mechanism = OAUTHBEARER\n"
    "msk.sasl.jaas.config = org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
    " required;\n"
    f"msk.sasl.login.callback.handler.class = {_MSK}IAMOAuthBearerLoginCallbackHandler\n"
    f"msk.sasl.client.callback.handler.class = {_MSK}IAMOAuthBearerLoginCallbackHandler\n"
)


@pytest.mark.parametrize("login", [AS_IAM, AS_OAUTHBEARER], ids=["aws-msk-iam", "oauthbearer"])
def test_import_mm2_reads_msks_iam_login_in_either_form(login: str) -> None:
    text = (
        f"clusters = msk, dc\nmsk.bootstrap.servers = {BOOTSTRAP}\n"
        f"msk.security.protocol = SASL_SSL\n{login}dc.bootstrap.servers = dc-1:9092\n"
        "dc->msk.enabled = true\n"
    )
    result = import_properties(text, "mm2.properties")
    assert result.data is not None
    assert result.data["clusters"]["msk"] == {
        "bootstrap": BOOTSTRAP,
        "security": {"protocol": "SASL_SSL", "sasl": {"mechanism": "AWS_MSK_IAM"}},
    }
    assert [d.code for d in result.diagnostics] == []


def test_import_mm2_says_a_named_profile_is_the_machines_to_give() -> None:
    text = (
        f"clusters = msk, dc\nmsk.bootstrap.servers = {BOOTSTRAP}\n"
        "msk.security.protocol = SASL_SSL\n"
        + AS_IAM.replace("required;", 'required awsProfileName="replication";')
        + "dc.bootstrap.servers = dc-1:9092\ndc->msk.enabled = true\n"
    )
    result = import_properties(text, "mm2.properties")
    assert result.data is not None
    [said] = result.diagnostics
    assert (
        said.code == "M016" and "awsProfileName" in said.message and "AWS_PROFILE" in said.message
    )
