"""The async Kubernetes API client: config, discovery, CRUD, watch, rate limiting, retries.

Start with :class:`Client` (``await Client.from_kubeconfig()``); errors are in
:mod:`setpoint.client.errors`, connection settings in :class:`ClientConfig`.
"""

from setpoint.client.client import DEFAULT_PAGE_SIZE, Client, ObjectList
from setpoint.client.config import ClientConfig
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
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "CredentialSource",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "Invalid",
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
]
