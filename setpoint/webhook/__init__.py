"""Admission webhooks of an operator: typed defaulters and validators, and their HTTPS server.

Kubernetes asks webhooks about writes before it stores them (an ``AdmissionReview``): a
*mutating* webhook may change the object (it answers a JSON patch), a *validating* one may
refuse it. This package is the operator's side of that exchange, as controller-runtime's
``pkg/webhook`` is for Go:

- :mod:`.review` reads an AdmissionReview (``admission.k8s.io/v1`` or ``v1beta1``) and writes
  the answer in the same version; :class:`Denied` is how a handler refuses.
- :mod:`.defaulting` runs a *defaulter* — a function that mutates a typed object in place —
  and answers a **lossless** patch: only what the defaulter changed, applied to the object as
  it was sent, so fields the model does not know and fields the user never set are never
  removed or rewritten (controller-runtime #2931 diffs a re-serialised object instead).
- :mod:`.validation` runs a *validator* (create/update/delete functions returning warnings or
  raising :class:`Denied`).
- :mod:`.conversion` converts a kind's versions through a hub version (``/convert``).
- :mod:`.server` serves them over HTTPS on kubebuilder's paths (:mod:`.paths`), with
  controller-runtime's body limit, certificate directory, certificate reload and metrics.

Handlers never crash the server: an unexpected exception answers ``allowed: false`` with
code 500 and a one-line message (the traceback is logged once); a malformed review gets 400.
"""

from setpoint.webhook.certificates import default_certificate_directory
from setpoint.webhook.conversion import ConversionError, Converter
from setpoint.webhook.defaulting import Defaulter, lossless_patch
from setpoint.webhook.paths import mutate_path, validate_path
from setpoint.webhook.review import AdmissionRequest, AdmissionResponse, Denied
from setpoint.webhook.server import WebhookServer
from setpoint.webhook.validation import Validator

__all__ = [
    "AdmissionRequest",
    "AdmissionResponse",
    "ConversionError",
    "Converter",
    "Defaulter",
    "Denied",
    "Validator",
    "WebhookServer",
    "default_certificate_directory",
    "lossless_patch",
    "mutate_path",
    "validate_path",
]
