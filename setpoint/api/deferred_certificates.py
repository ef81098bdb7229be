"""Import aiohttp without paying, at start-up, for TLS contexts setpoint does not use.

When imported, aiohttp builds two default ``SSLContext`` objects and loads the system's CA
certificates into each: about a third of the instructions ``setpoint run`` executed before its
first request (callgrind: ~250 M instructions per load, of ~1.56 G in all), and about 30 ms of
the local cluster's start. Neither side uses those contexts: every TLS connection of the client
gets the context built from the kubeconfig, and the cluster's listeners and webhook calls build
their own. It lives here, with the data helpers, because the runtime and the local cluster may
share nothing else.

So while aiohttp is imported, a context that asks for the default certificates
(``set_default_verify_paths``, which ``ssl.create_default_context`` calls) becomes a
:class:`DeferredCertificatesContext`: still an ``ssl.SSLContext``, it loads them on first use
(a handshake, or a look at its certificates) instead. Anyone in the process who uses aiohttp's
defaults (an operator calling an HTTPS API) sees the same verification, one load later. The
``ssl`` module is restored when the import ends.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["DeferredCertificatesContext", "deferred_default_certificates"]

_MISSING = object()
# The real loader (defined by ssl's C base class); the patched name shadows it during imports.
_LOAD_DEFAULT_PATHS = ssl.SSLContext.set_default_verify_paths
_LOCK = threading.Lock()


class DeferredCertificatesContext(ssl.SSLContext):
    """An ``SSLContext`` whose default CA certificates load on first use."""

    _certificates_pending: bool

    def _load_pending(self) -> None:
        with _LOCK:
            if self.__dict__.get("_certificates_pending"):
                _LOAD_DEFAULT_PATHS(self)
                self._certificates_pending = False

    def set_default_verify_paths(self) -> None:
        self._certificates_pending = False
        _LOAD_DEFAULT_PATHS(self)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self._load_pending()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self._load_pending()
        return super().wrap_bio(*args, **kwargs)

    def get_ca_certs(self, *args: Any, **kwargs: Any) -> Any:
        self._load_pending()
        return super().get_ca_certs(*args, **kwargs)

    def cert_store_stats(self) -> Any:
        self._load_pending()
        return super().cert_store_stats()


def _defer(context: ssl.SSLContext) -> None:
    if type(context) is ssl.SSLContext:  # a subclass may depend on its own loading
        context.__class__ = DeferredCertificatesContext
        context.__dict__["_certificates_pending"] = True
    else:
        _LOAD_DEFAULT_PATHS(context)


@contextmanager
def deferred_default_certificates() -> Iterator[None]:
    """While active, contexts defer loading the default CA certificates to their first use."""
    saved = ssl.SSLContext.__dict__.get("set_default_verify_paths", _MISSING)
    ssl.SSLContext.set_default_verify_paths = _defer  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        if saved is _MISSING:
            del ssl.SSLContext.set_default_verify_paths
        else:
            ssl.SSLContext.set_default_verify_paths = saved  # type: ignore[method-assign]
