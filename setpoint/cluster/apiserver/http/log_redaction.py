"""What the request log may write: the path and query with any credential taken out.

A client may put the bearer token in the query string (``?access_token=...``, or by mistake
anywhere); the log never shows it. Values of credential-like parameters are replaced, and so is
the server's own token wherever it appears (plain or percent-encoded).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

REDACTED: Final = "REDACTED"
#: Query parameters whose value is a credential whatever it is.
_CREDENTIAL_PARAMETER = re.compile(
    r"(?i)((?:^|[?&;])(?:access_token|token|bearer|password|secret|authorization)=)[^&;]*"
)


class LogRedactor:
    """Removes the server's token and credential-like query values from logged text."""

    def __init__(self, token: str) -> None:
        self._secrets = sorted({token, quote(token, safe="")} - {""}, key=len, reverse=True)

    def path(self, path_qs: str) -> str:
        """``path_qs`` as the log may show it."""
        text = _CREDENTIAL_PARAMETER.sub(rf"\1{REDACTED}", path_qs)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text
