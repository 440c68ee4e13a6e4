"""A small OpenID Connect identity provider for live tests: OAuth client credentials in, signed
JSON Web Tokens out.

`POST /token` (grant_type=client_credentials, the client's id and secret by HTTP Basic or in
the form) answers with an RS256 token whose `sub` is the client id; `GET /jwks` publishes the
public key a Kafka broker verifies tokens with (`sasl.oauthbearer.jwks.endpoint.url`). Tokens
live `lifetime` seconds. It counts the tokens it issued, so a test can tell that a client really
asked it.
"""

import base64
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

KEY_ID = "topo-test-key"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _number(value: int) -> str:
    return _b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))


@dataclass
class Provider:
    clients: dict[str, str]  # client id -> secret
    issuer: str = ""
    audience: str | None = None  # a lab broker checks no audience: it refuses a token with one
    lifetime: int = 3600
    issued: list[str] = field(default_factory=list)  # the client id of each token issued
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    def jwks(self) -> dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {
            "keys": [
                {
                    "kty": "RSA",
                    "use": "sig",
                    "alg": "RS256",
                    "kid": KEY_ID,
                    "n": _number(numbers.n),
                    "e": _number(numbers.e),
                }
            ]
        }

    def token(self, client_id: str, scope: str) -> str:
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": client_id,
            "iat": now,
            "exp": now + self.lifetime,
            "scope": scope,
        }
        if self.audience is not None:
            claims["aud"] = self.audience
        signing_input = ".".join(
            _b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
        )
        signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        self.issued.append(client_id)
        return f"{signing_input}.{_b64(signature)}"


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if self.path != "/jwks":
            self._answer(404, {"error": "not_found"})
            return
        self._answer(200, self.server.provider.jwks())

    def do_POST(self) -> None:
        if self.path != "/token":
            self._answer(404, {"error": "not_found"})
            return
        length = int(self.headers.get("Content-Length", "0"))
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        basic = self.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            decoded = base64.b64decode(basic.removeprefix("Basic ")).decode()
            client_id, _, secret = decoded.partition(":")
            client_id, secret = urllib.parse.unquote(client_id), urllib.parse.unquote(secret)
        provider = self.server.provider
        if form.get("grant_type") != "client_credentials":
            self._answer(400, {"error": "unsupported_grant_type"})
        elif provider.clients.get(client_id) != secret or not secret:
            self._answer(401, {"error": "invalid_client"})
        else:
            token = provider.token(client_id, form.get("scope", ""))
            self._answer(
                200,
                {"access_token": token, "token_type": "Bearer", "expires_in": provider.lifetime},
            )

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: Provider) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.provider = provider


@dataclass(frozen=True)
class Running:
    provider: Provider
    url: str  # http://127.0.0.1:PORT

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"


@contextmanager
def running(clients: dict[str, str], **settings: Any) -> Iterator[Running]:
    server = _Server(Provider(clients, **settings))
    server.provider.issuer = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="oidc-provider", daemon=True)
    thread.start()
    try:
        yield Running(server.provider, server.provider.issuer)
    finally:
        server.shutdown()
        server.server_close()
