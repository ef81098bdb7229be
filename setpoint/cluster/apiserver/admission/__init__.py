"""The admission chain of the local API server: webhooks, as kube-apiserver calls them.

Every create, update (patches and applies included) and delete passes through admission
twice (:mod:`..registry.admission_point` says where): *mutating* admission before the object
is validated, *validating* admission after. This package serves the
``admissionregistration.k8s.io/v1`` kinds that configure it (:mod:`.resources`, validated and
defaulted as upstream in :mod:`.configuration_rules`) and implements the chain
(:mod:`.webhook_chain`): the configured webhooks are matched against each write
(:mod:`.matching`, :mod:`.match_conditions`), called over HTTPS (:mod:`.webhook_calls`) —
mutating ones in series, with ``reinvocationPolicy: IfNeeded``, validating ones concurrently —
and their answers applied: JSON patches, denials with upstream's messages, warnings.

Webhooks are never called for the webhook configuration kinds themselves, so a broken
``failurePolicy: Fail`` webhook can always be deleted. A webhook that hangs costs its
``timeoutSeconds`` and never blocks the event loop: calls are plain asyncio HTTP requests.
"""
