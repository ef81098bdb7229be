"""The API server: storage + registry + semantics + HTTP, started and stopped as one unit.

``APIServer`` binds 127.0.0.1 only: plain HTTP, and HTTPS with a certificate from the cluster's
certificate authority. Callers authenticate with the admin token, service account tokens or
(on HTTPS) client certificates (:mod:`.auth.authentication`). On start it creates the system
namespaces if they are missing and serves every CRD already in storage, so a server restarted
on the same data directory answers exactly as before.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cluster.apiserver import kubernetes_service, server_clock
from setpoint.cluster.apiserver.admission.configuration_rules import (
    WebhookConfigurationBehaviour,
)
from setpoint.cluster.apiserver.admission.conversion_calls import ConversionWebhookCaller
from setpoint.cluster.apiserver.admission.resources import admission_resources
from setpoint.cluster.apiserver.admission.webhook_chain import WebhookChain
from setpoint.cluster.apiserver.audit import AuditLog
from setpoint.cluster.apiserver.audit.audit_feed import DEFAULT_AUDIT_FEED_SIZE, AuditFeed
from setpoint.cluster.apiserver.auth.authentication import Authenticator
from setpoint.cluster.apiserver.auth.authentication.client_certificates import (
    ClientCertificate,
    issue_client_certificate,
)
from setpoint.cluster.apiserver.auth.authentication.object_lookup import stored_object_lookup
from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import (
    ServiceAccountTokens,
    generate_signing_key,
)
from setpoint.cluster.apiserver.auth.authorization.access_control import AccessControl
from setpoint.cluster.apiserver.auth.authorization.authorizers import RBAC
from setpoint.cluster.apiserver.auth.authorization.escalation import RBACBehaviour
from setpoint.cluster.apiserver.auth.authorization.rbac_index import RBAC_GROUP
from setpoint.cluster.apiserver.auth.authorization.unconfined_pods import UnconfinedPodsGate
from setpoint.cluster.apiserver.http.clock_endpoint import ClockEndpoint
from setpoint.cluster.apiserver.http.fault_injection import FaultInjector
from setpoint.cluster.apiserver.http.handler import APIHandler
from setpoint.cluster.apiserver.http.pod_endpoints import PodEndpoints, PodRuntime
from setpoint.cluster.apiserver.http.protocol_errors import StatusServer
from setpoint.cluster.apiserver.http.serving_certificate import (
    CertificateAuthority,
    ServingCertificate,
    issue_serving_certificate,
)
from setpoint.cluster.apiserver.kinds.api_services import APIServiceRegistration
from setpoint.cluster.apiserver.kinds.certificate_signing_requests import (
    CertificateSigningRequestBehaviour,
)
from setpoint.cluster.apiserver.kinds.events import EventBehaviour
from setpoint.cluster.apiserver.kinds.flow_control import ensure_mandatory_flow_control
from setpoint.cluster.apiserver.kinds.horizontal_pod_autoscalers import (
    HorizontalPodAutoscalerBehaviour,
)
from setpoint.cluster.apiserver.kinds.leases import LeaseBehaviour
from setpoint.cluster.apiserver.kinds.limit_ranges import (
    LimitRangedPodBehaviour,
    LimitRangeIndex,
    LimitRanger,
)
from setpoint.cluster.apiserver.kinds.namespaces import (
    SYSTEM_NAMESPACES,
    NamespaceAdmission,
    NamespaceBehaviour,
    delete_namespace,
    new_namespace,
)
from setpoint.cluster.apiserver.kinds.persistent_volumes import VolumeBehaviour
from setpoint.cluster.apiserver.kinds.priority_classes import (
    PriorityClassBehaviour,
    ensure_system_priority_classes,
)
from setpoint.cluster.apiserver.kinds.services import ServiceBehaviour
from setpoint.cluster.apiserver.quota.admission import (
    QuotaAdmission,
    quota_index,
)
from setpoint.cluster.apiserver.registry.builtin_resources import builtin_resources
from setpoint.cluster.apiserver.registry.crd_serving import (
    CRD_STORAGE_ROOT,
    CRDBehaviour,
    CustomResourceBehaviour,
)
from setpoint.cluster.apiserver.registry.kind_behaviour import JobBehaviour, KindBehaviour
from setpoint.cluster.apiserver.registry.namespaced_index import IndexedKindBehaviour
from setpoint.cluster.apiserver.registry.object_operations import (
    DeleteOptions,
    ObjectOperations,
    WriteOptions,
)
from setpoint.cluster.apiserver.registry.resource_registry import ResourceRegistry
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import Storage
from setpoint.cluster.apiserver.validation.builtin_hook import builtin_validator

log = logging.getLogger(__name__)

LOOPBACK: Final = "127.0.0.1"
#: Bytes of randomness in a generated bearer token (256 bits).
TOKEN_BYTES: Final = 32
#: How long a stopping server lets in-flight requests finish (watches are cut short).
SHUTDOWN_TIMEOUT_SECONDS: Final = 2.0


RBAC_PLURALS: Final = ("roles", "rolebindings", "clusterroles", "clusterrolebindings")


def generate_token() -> str:
    """A fresh random bearer token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


class APIServer:
    """A Kubernetes-compatible API server over ``storage`` on 127.0.0.1:``port``."""

    def __init__(
        self,
        storage: Storage,
        *,
        port: int = 0,
        token: str | None = None,
        https_port: int | None = 0,
        certificate: ServingCertificate | None = None,
        authorization: str = RBAC,
        authority: CertificateAuthority | None = None,
        client_ca_pem: bytes | None = None,
        service_account_key_pem: bytes | None = None,
        clock: Clock = SYSTEM_CLOCK,
        audit_log: str | Path | None = None,
        audit_level: str = "Metadata",
        audit_omit_groups: Sequence[str] = (),
        audit_feed_size: int = DEFAULT_AUDIT_FEED_SIZE,
    ) -> None:
        self.storage = storage
        #: The cluster clock (``/debug/setpoint/clock`` reads it; a FakeClock moves there).
        self.clock = clock
        self.token = token or generate_token()
        self._requested_port = port
        self._requested_https_port = https_port
        self.port = 0
        #: The HTTPS listener's port (0 when none); kubectl needs it (see serving_certificate).
        self.https_port = 0
        #: The HTTPS listener's certificate: the one given, else one issued by the authority.
        self.certificate: ServingCertificate | None = None
        self._given_certificate = certificate
        #: The cluster's CA (given, else generated at start unless a certificate is given).
        self.authority = authority
        #: The authority client certificates must chain to (None: the cluster's CA).
        self.client_ca_pem = client_ca_pem
        self.registry = ResourceRegistry()
        validator = builtin_validator()
        self._default_behaviour = KindBehaviour(validator)
        admission = NamespaceAdmission(storage)
        self.operations = ObjectOperations(storage, self._behaviour_for, admission.admit)
        for resource in builtin_resources():
            self.registry.add(resource)
        self._custom_behaviour = CustomResourceBehaviour()
        #: Checks of custom kinds the cluster acts on, by (group, kind) (see
        #: ``CustomResourceBehaviour.checks``).
        self.custom_resource_checks = self._custom_behaviour.checks
        self.crds = CRDBehaviour(self.registry, self.operations, validator)
        #: The APIServices of the served groups (Local, Available), kept in step with CRDs.
        self.api_services = APIServiceRegistration(self.registry, self.operations)
        self.crds.on_served_changed = self.api_services.sync
        #: Authorization (RBAC or AlwaysAllow), the default roles and ClusterRole aggregation.
        self.access = AccessControl(self.operations, authorization)
        rbac = RBACBehaviour(validator, lambda: self.access.authorizer, self.access.index)
        #: Who is calling: the admin token, service account tokens, client certificates.
        self.authenticator = Authenticator(
            self.token,
            ServiceAccountTokens(
                service_account_key_pem or generate_signing_key(),
                stored_object_lookup(self.registry, self.operations),
                clock=clock,
            ),
        )
        # The LimitRanger admission plugin and the LimitRanges it reads.
        limit_ranges = LimitRangeIndex(storage)
        limit_ranger = LimitRanger(limit_ranges)
        # The ResourceQuota admission plugin and the quotas it reads.
        quotas = quota_index(storage)
        quota_admission = QuotaAdmission(storage, quotas)
        self.operations.charge_quota = quota_admission.charge_create
        self.operations.charge_quota_update = quota_admission.charge_update
        self._behaviours: dict[str, KindBehaviour] = {
            "/core/namespaces/": NamespaceBehaviour(self._namespace_terminating),
            "/core/pods/": LimitRangedPodBehaviour(limit_ranger, validator, storage),
            "/core/limitranges/": IndexedKindBehaviour(limit_ranges, validator),
            "/core/resourcequotas/": IndexedKindBehaviour(quotas, validator),
            "/core/events/": EventBehaviour(validator),
            "/coordination.k8s.io/leases/": LeaseBehaviour(validator),
            "/batch/jobs/": JobBehaviour(validator),
            "/core/services/": ServiceBehaviour(storage, validator),
            "/core/persistentvolumes/": VolumeBehaviour(storage, limit_ranger, validator),
            "/scheduling.k8s.io/priorityclasses/": PriorityClassBehaviour(validator),
            "/autoscaling/horizontalpodautoscalers/": HorizontalPodAutoscalerBehaviour(validator),
            "/core/persistentvolumeclaims/": VolumeBehaviour(storage, limit_ranger, validator),
            "/certificates.k8s.io/certificatesigningrequests/": (
                CertificateSigningRequestBehaviour(validator, lambda: self.access.authorizer)
            ),
            CRD_STORAGE_ROOT: self.crds,
            **{f"/{RBAC_GROUP}/{plural}/": rbac for plural in RBAC_PLURALS},
        }
        #: Admission webhooks: the admissionregistration.k8s.io kinds and the chain they
        #: configure, which every create, update and delete passes through.
        self.webhooks = WebhookChain(storage, self._resource_of_kind)
        self.operations.admission = self.webhooks
        self.webhooks.equivalents = self._equivalent_resources
        self.webhooks.convert = self.operations.convert_between
        # CRD conversion webhooks share the admission webhooks' client and Service lookup.
        self.crds.conversion_poster = ConversionWebhookCaller(self.webhooks.client, storage).post
        configurations = WebhookConfigurationBehaviour(validator, self.webhooks.reload)
        for resource in admission_resources():
            self.registry.add(resource)
            self._behaviours[resource.storage_root] = configurations
        #: The audit log (``--audit-log``): one audit.k8s.io Event per request; None: off.
        self.audit = (
            AuditLog(audit_log, audit_level, audit_omit_groups) if audit_log is not None else None
        )
        #: The recent mutating requests with their diffs (``/debug/setpoint/audit``); None: off.
        self.audit_feed = (
            AuditFeed(
                audit_feed_size,
                audit_id=self.audit.audit_id if self.audit is not None else None,
            )
            if audit_feed_size
            else None
        )
        self._runner: web.ServerRunner | None = None
        self._handler: APIHandler | None = None
        #: Fault injection for tests (off until rules are set).
        self.faults = FaultInjector()
        #: What runs the pods' containers (the kubelet sets itself here): serves pods/log.
        self.pod_runtime: PodRuntime | None = None
        #: Refuses non-admins what runs code when --run-pods cannot isolate pods (else None).
        self.unconfined_pods: UnconfinedPodsGate | None = None

    def _namespace_terminating(self, name: str) -> None:
        # The namespace controller (setpoint.cluster.controllers.namespace) empties and
        # finalizes terminating namespaces; without controllers they stay Terminating, as
        # with a kube-apiserver that has no kube-controller-manager.
        return None

    def _builtin(self, group: str, plural: str) -> ServedResource:
        resource = self.registry.get(group, "v1", plural)
        assert resource is not None, f"built-in {plural} missing from the table"
        return resource

    def _equivalent_resources(
        self, resource: ServedResource, subresource: str
    ) -> list[ServedResource]:
        """The other resources served from ``resource``'s storage (a CRD's other versions,
        ``events.k8s.io`` events for core events, ...) that have ``subresource``: upstream's
        ``EquivalentResourceMapper``, which groups resources by their storage."""
        return [
            other
            for other in self.registry
            if other.storage_root == resource.storage_root
            and other.api_version != resource.api_version
            and (not subresource or subresource in other.subresources)
        ]

    def _resource_of_kind(self, api_version: str, kind: str) -> ServedResource | None:
        for resource in self.registry:
            if resource.api_version == api_version and resource.kind == kind:
                return resource
        return None

    def _behaviour_for(self, resource: ServedResource) -> KindBehaviour:
        if resource.is_custom:
            return self._custom_behaviour
        return self._behaviours.get(resource.storage_root, self._default_behaviour)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` once started."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def https_url(self) -> str:
        """``https://127.0.0.1:PORT`` once started with an HTTPS listener ('' without)."""
        return f"https://{LOOPBACK}:{self.https_port}" if self.https_port else ""

    async def start(self) -> None:
        """Bootstrap the stored state and start listening."""
        server_clock.register(self.clock)
        await self._bootstrap()
        handler = APIHandler(
            self.registry,
            self.operations,
            self.token,
            on_namespace_terminating=self._namespace_terminating,
            server_address=lambda: f"{LOOPBACK}:{self.port}",
            pod_endpoints=PodEndpoints(
                lambda: self.pod_runtime,
                lambda: self.registry.get("policy", "v1", "poddisruptionbudgets"),
            ),
            access=self.access,
            faults=self.faults,
            authenticator=self.authenticator,
            audit=self.audit,
            unconfined_pods=lambda: self.unconfined_pods,
            clock=ClockEndpoint(self.clock),
            audit_feed=self.audit_feed,
        )
        self._handler = handler
        self.crds.on_resources_deleted = handler.close_watches
        # access_log=None: the handler logs one debug line per request itself.
        extra: dict[str, Any] = {}
        if self.audit is not None:
            self.audit.open()
            extra["request_factory"] = self.audit.request_factory()
        server = StatusServer(handler, handler_cancellation=True, access_log=None, **extra)
        runner = web.ServerRunner(
            server, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS
        )
        await runner.setup()
        self._runner = runner
        site = web.TCPSite(runner, LOOPBACK, self._requested_port, reuse_address=True)
        await site.start()
        self.port = server_sockets(runner)[0]
        if self._requested_https_port is not None:
            self.certificate = self._serving_certificate()
            secure = web.TCPSite(
                runner,
                LOOPBACK,
                self._requested_https_port,
                ssl_context=self.certificate.server_context(self.trusted_client_ca_pem),
                reuse_address=True,
            )
            await secure.start()
            self.https_port = server_sockets(runner)[-1]
            log.info("API server listening on %s and %s", self.url, self.https_url)
        else:
            log.info("API server listening on %s", self.url)
        await kubernetes_service.reconcile(
            self.registry, self.operations, LOOPBACK, self.https_port or self.port
        )

    def _serving_certificate(self) -> ServingCertificate:
        if self._given_certificate is not None:
            return self._given_certificate
        if self.authority is None:
            self.authority = CertificateAuthority.generate()
        return issue_serving_certificate(self.authority.certificate_pem, self.authority.key_pem)

    @property
    def trusted_client_ca_pem(self) -> bytes | None:
        """The authority client certificates are checked against (None: not accepted)."""
        if self.client_ca_pem is not None:
            return self.client_ca_pem
        return self.authority.certificate_pem if self.authority is not None else None

    def issue_client_certificate(
        self, user: str, groups: tuple[str, ...] = ()
    ) -> ClientCertificate:
        """A certificate (and key) authenticating ``user`` in ``groups``, from the cluster's CA.

        Raises ``ValueError`` when clients are checked against another CA (``client_ca_pem``):
        only the holder of that CA's key can sign for it.
        """
        if self.client_ca_pem is not None or self.authority is None:
            raise ValueError(
                "this server trusts client certificates from another CA (--client-ca); "
                "sign one with that CA's key"
            )
        return issue_client_certificate(
            self.authority.certificate_pem, self.authority.key_pem, user, groups
        )

    async def _bootstrap(self) -> None:
        namespaces = self._builtin("", "namespaces")
        for name in SYSTEM_NAMESPACES:
            if self.storage.get(namespaces.storage_key(None, name)) is None:
                await self.operations.create(namespaces, None, new_namespace(name), WriteOptions())
        await self.crds.serve_stored()
        await ensure_system_priority_classes(
            self.operations, self._builtin("scheduling.k8s.io", "priorityclasses")
        )
        await ensure_mandatory_flow_control(self.operations, self.registry)
        await self.api_services.sync()
        await self.access.start(self.registry)

    async def create_namespace(self, name: str) -> None:
        """Create namespace ``name`` directly (no HTTP round trip); 409 APIError if it exists."""
        namespaces = self._builtin("", "namespaces")
        await self.operations.create(namespaces, None, new_namespace(name), WriteOptions())

    async def delete_namespace(self, name: str) -> None:
        """Delete namespace ``name`` and its content (as a DELETE would); no error if absent."""
        namespaces = self._builtin("", "namespaces")
        try:
            await delete_namespace(
                self.operations,
                namespaces,
                name,
                DeleteOptions(),
                self._namespace_terminating,
            )
        except APIError as exc:
            if exc.code != 404:
                raise

    async def stop(self) -> None:
        """Stop listening, end watches, and stop background work (the storage stays open)."""
        await self.crds.close()
        await self.access.stop()
        await self.webhooks.close()
        if self._handler is not None:
            self._handler.close_watches()
        if self.audit_feed is not None:
            self.audit_feed.close_streams()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.audit is not None:
            self.audit.close()
        server_clock.unregister(self.clock)


def server_sockets(runner: web.BaseRunner) -> list[int]:
    """The ports a started runner listens on."""
    ports: list[int] = []
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            ports.append(int(address[1]))
    return ports
