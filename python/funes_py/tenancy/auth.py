"""Who is asking: bearer tokens for the read path, the ingest key for the write path, tenant names.

The tenant of a recall is the user named by the verified bearer token and nothing else: no tool argument,
header or query text can choose it. A tenant's directory is named by a hash of the user, so listing the
data directory does not reveal who uses the service.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

import jwt

if TYPE_CHECKING:  # the MCP SDK only for the MCP surface: the proxy shares this module without it
    from mcp.server.auth.provider import AccessToken

log = logging.getLogger("funes_py.tenancy")

TENANT_HEX_CHARS = 24


def tenant_id(user: str) -> str:
    """The directory name of `user`'s memory: the first 24 hex digits of sha256(user)."""
    return hashlib.sha256(user.encode("utf-8")).hexdigest()[:TENANT_HEX_CHARS]


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class TenantTokenVerifier:
    """An `mcp.server.auth.provider.TokenVerifier`: a static token table and/or HS256 JWTs.

    The returned AccessToken carries the user in `client_id` (and `subject`); the tool reads it from the
    request that carried the call.
    """

    def __init__(self, tokens: dict[str, str] | None = None, jwt_secret: str | None = None,
                 jwt_audience: str | None = None) -> None:
        # Keyed by a digest of the token, so a lookup's timing says nothing about the token's characters.
        self._static = {_digest(t): u for t, u in (tokens or {}).items() if t and u}
        self._jwt_secret = jwt_secret or None
        self._jwt_audience = jwt_audience or None

    @classmethod
    def from_files(cls, tokens_file: Path | None, jwt_secret: str | None,
                   jwt_audience: str | None = None) -> TenantTokenVerifier:
        tokens: dict[str, str] = {}
        if tokens_file is not None:
            data = json.loads(Path(tokens_file).read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in data.items()
            ):
                raise ValueError(f'{tokens_file}: expected a JSON object {{"<token>": "<user>"}}')
            tokens = data
        verifier = cls(tokens, jwt_secret, jwt_audience)
        if not verifier.enabled:
            log.warning("no FUNES_TOKENS_FILE and no FUNES_JWT_SECRET: every MCP request will get 401")
        return verifier

    @property
    def enabled(self) -> bool:
        return bool(self._static) or self._jwt_secret is not None

    def user_for(self, token: str) -> tuple[str, int | None] | None:
        """(user, expiry) for a valid token, None otherwise."""
        user = self._static.get(_digest(token))
        if user is not None:
            return user, None
        if self._jwt_secret is None or token.count(".") != 2:
            return None
        try:
            claims = jwt.decode(
                token,
                self._jwt_secret,
                algorithms=["HS256"],  # pinned: never let the token pick its own algorithm
                audience=self._jwt_audience,
                options={"verify_aud": self._jwt_audience is not None},
            )
        except jwt.PyJWTError:
            return None
        user = claims.get("sub") or claims.get("client_id")
        if not isinstance(user, str) or not user.strip() or not _encodable(user):
            return None  # a lone surrogate ("\ud800" in the claims) names no tenant: its hash cannot be taken
        exp = claims.get("exp")
        return user, int(exp) if isinstance(exp, (int, float)) else None

    def user_of_header(self, authorization: str | None) -> str | None:
        """The user of an `Authorization: Bearer <token>` header, if the token is valid and not expired."""
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        found = self.user_for(authorization[7:])
        if found is None:
            return None
        user, expires = found
        return None if expires and expires < int(time.time()) else user

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        found = self.user_for(token)
        if found is None:
            return None
        user, exp = found
        return AccessToken(token=token, client_id=user, subject=user, scopes=[], expires_at=exp)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def ingest_key_ok(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison of the `x-ingest-key` header; no key configured means no ingest."""
    if not expected or given is None:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))
