"""Where the object operations hand a write to admission (upstream: ``admission.Interface``).

The registry knows *when* admission runs — mutating admission before a write is validated,
validating admission after, on creates, updates (patches and applies included) and deletes —
but not *what* it does: :class:`Admission` is implemented by
:mod:`setpoint.cluster.apiserver.admission` (webhooks). ``ObjectOperations.admission`` is None
until the server installs one, and :meth:`Admission.active` lets a write with nothing to admit
skip building the request at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from setpoint.cluster.apiserver.registry.served_resources import ServedResource

CREATE: Final = "CREATE"
UPDATE: Final = "UPDATE"
DELETE: Final = "DELETE"


@dataclass(slots=True)
class AdmissionRequest:
    """One write as admission sees it (upstream: ``admission.Attributes``)."""

    operation: str
    resource: ServedResource
    #: ``status``, ``scale`` … or ``""`` for the main resource.
    subresource: str
    #: ``""`` for cluster-scoped objects.
    namespace: str
    name: str
    #: The object being written (None on DELETE).
    object: dict[str, Any] | None
    #: The stored object (None on CREATE).
    old_object: dict[str, Any] | None
    dry_run: bool = False
    #: The ``options`` of the AdmissionReview (CreateOptions, UpdateOptions, DeleteOptions).
    options: dict[str, Any] = field(default_factory=dict)


class Admission(Protocol):
    """The admission chain as the object operations call it."""

    def active(self, resource: ServedResource) -> bool:
        """Whether anything may admit writes of ``resource`` (False: skip admission)."""
        ...

    async def mutate(self, request: AdmissionRequest) -> tuple[dict[str, Any] | None, list[str]]:
        """Run mutating admission: the (possibly changed) object and the warnings to return.

        Raises an ``APIError`` when the write is refused.
        """
        ...

    async def validate(self, request: AdmissionRequest) -> list[str]:
        """Run validating admission: the warnings to return; an ``APIError`` when refused."""
        ...
