"""Serving certificates from a directory, reloaded when the files change (cert-manager rotates
them in place): controller-runtime's ``certwatcher``, polling instead of inotify."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import ssl
import tempfile
from pathlib import Path
from typing import Final

from prometheus_client import Counter

from setpoint.client.metrics import REGISTRY

log = logging.getLogger(__name__)

#: How often the files are checked for a change (controller-runtime polls every 10 s too, on
#: top of file events).
RELOAD_INTERVAL_SECONDS: Final = 10.0

READ_CERTIFICATE_TOTAL = Counter(
    "certwatcher_read_certificate_total",
    "Total number of certificate reads",
    registry=REGISTRY,
)
READ_CERTIFICATE_ERRORS_TOTAL = Counter(
    "certwatcher_read_certificate_errors_total",
    "Total number of certificate read errors",
    registry=REGISTRY,
)


def default_certificate_directory() -> Path:
    """``<tmp>/k8s-webhook-server/serving-certs``: where controller-runtime looks by default."""
    return Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"


class CertificateWatcher:
    """An SSL context serving ``cert_file``/``key_file``, reloaded in place when they change."""

    def __init__(self, cert_file: Path, key_file: Path) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._digest = ""

    def _read_digest(self) -> str:
        hasher = hashlib.sha256()
        hasher.update(self.cert_file.read_bytes())
        hasher.update(self.key_file.read_bytes())
        return hasher.hexdigest()

    def load(self) -> None:
        """Load the files (raising ``OSError``/``ssl.SSLError`` when they are missing or bad)."""
        READ_CERTIFICATE_TOTAL.inc()
        try:
            digest = self._read_digest()
            self.context.load_cert_chain(str(self.cert_file), str(self.key_file))
        except (OSError, ssl.SSLError):
            READ_CERTIFICATE_ERRORS_TOTAL.inc()
            raise
        self._digest = digest

    def reload_if_changed(self) -> bool:
        """Load the files again if their content changed; whether it did. A failed read
        keeps the old certificate (cert-manager writes the two files one after the other)."""
        try:
            if self._read_digest() == self._digest:
                return False
            self.load()
        except (OSError, ssl.SSLError) as exc:
            log.warning("webhook serving certificate not reloaded: %s", exc)
            return False
        log.info("webhook serving certificate reloaded from %s", self.cert_file)
        return True

    async def watch(self, interval: float = RELOAD_INTERVAL_SECONDS) -> None:
        """Check the files every ``interval`` seconds until cancelled."""
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(interval)
                self.reload_if_changed()
