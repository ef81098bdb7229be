"""The async Kubernetes API client: config, discovery, CRUD, watch, rate limiting, retries.

A request flows through small stages, each in its own module:

* :class:`ClientConfig` (``config``, ``kubeconfig``, ``in_cluster``, ``exec_credential``,
  ``credentials``, ``official_client_login``) says where the server is and who we are;
* ``transport`` sends it over one aiohttp session: optional token bucket (``rate_limit``),
  credentials, retries with backoff for 429/5xx/connection errors (``retry_policy``), metrics
  (``metrics``, whose ``REGISTRY`` is shared by all setpoint metrics) and server warnings;
* :class:`RESTMapper` (``rest_mapper``) turns apiVersion + kind into a URL through discovery;
* :class:`Client` (``client``) is the API: ``get``, ``list``, ``create``, ``update``,
  ``update_status``, ``patch``, ``apply``, ``delete``, ``delete_collection``, ``watch`` on dicts
  or pydantic models (``typed_objects``), and ``list_raw`` / ``watch_raw`` for the cache;
* every failure is a typed exception from ``errors`` carrying the server's ``Status``.

Start with ``async with Client.from_kubeconfig() as client:`` (or ``Client.in_cluster()``,
``Client.from_environment()``; ``client = await Client.from_...()`` works too).
"""

from setpoint.client.client import DEFAULT_PAGE_SIZE, Client, ClientOpening, ObjectList
from setpoint.client.config import ClientConfig
from setpoint.client.conflicts import retry_on_conflict
from setpoint.client.credentials import (
    AuthInfo,
    BasicAuth,
    CredentialSource,
    StaticToken,
    TokenFile,
)
from setpoint.client.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    ClientError,
    ConfigError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    Gone,
    Invalid,
    InvalidResponse,
    MethodNotAllowed,
    NoKindMatch,
    NotAcceptable,
    NotFound,
    RequestEntityTooLarge,
    ServerError,
    ServiceUnavailable,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)
from setpoint.client.metrics import REGISTRY
from setpoint.client.request_options import (
    FieldValidation,
    PatchType,
    Preconditions,
    PropagationPolicy,
)
from setpoint.client.rest_mapper import RESTMapper
from setpoint.client.retry_policy import RetryPolicy
from setpoint.client.watch_event import WatchEvent, WatchEventType

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "REGISTRY",
    "AlreadyExists",
    "ApiError",
    "AuthInfo",
    "BadRequest",
    "BasicAuth",
    "Client",
    "ClientConfig",
    "ClientError",
    "ClientOpening",
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "CredentialSource",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "Invalid",
    "InvalidResponse",
    "MethodNotAllowed",
    "NoKindMatch",
    "NotAcceptable",
    "NotFound",
    "ObjectList",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "RESTMapper",
    "RequestEntityTooLarge",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "StaticToken",
    "TokenFile",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "WatchEvent",
    "WatchEventType",
    "retry_on_conflict",
]
