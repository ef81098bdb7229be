"""The controller manager: informers, Event recorder and every controller of one local cluster.

::

    manager = ControllerManager(server, ControllerOptions(clock=clock, nodes=3))
    await manager.start()   # after server.start()
    ...
    await manager.stop()

Each controller gets its own :class:`ClusterAccess` (its identity) over the shared informers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence

from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess
from setpoint.cluster.controllers.framework.controller import Controller
from setpoint.cluster.controllers.framework.event_recorder import EventRecorder
from setpoint.cluster.controllers.framework.informer_set import InformerSet
from setpoint.cluster.controllers.framework.options import ControllerOptions

log = logging.getLogger(__name__)

#: How long :meth:`ControllerManager.namespace_set_up` waits at most, and how often it looks.
NAMESPACE_SET_UP_SECONDS = 30.0
SET_UP_POLL_SECONDS = 0.005


class ControllerManager:
    """Runs ``controllers`` (classes; default: the catalog) inside ``server``'s event loop."""

    def __init__(
        self,
        server: APIServer,
        options: ControllerOptions | None = None,
        controllers: Sequence[type[Controller]] | None = None,
    ) -> None:
        self.server = server
        self.options = options or ControllerOptions()
        if self.options.service_account_tokens is None:
            # The tokens controller signs with the API server's key, as upstream's shares
            # --service-account-private-key-file.
            self.options.service_account_tokens = server.authenticator.service_accounts
        self.options.api_port = lambda: server.https_port or server.port
        if not self.options.root_ca_pem and server.certificate is not None:
            self.options = dataclasses.replace(
                self.options, root_ca_pem=server.certificate.trusted_pem
            )
        if (
            self.options.signing_authority is None
            and server.authority is not None
            and server.client_ca_pem is None
        ):
            self.options = dataclasses.replace(self.options, signing_authority=server.authority)
        if controllers is None:
            from setpoint.cluster.controllers.catalog import controller_classes

            controllers = controller_classes(self.options)
        self._classes = list(controllers)
        self.informers = InformerSet(server.storage, server.registry)
        self.recorder = EventRecorder(server.operations, server.registry, self.options.clock)
        self.controllers: list[Controller] = []

    def access(self, controller: type[Controller]) -> ClusterAccess:
        """A :class:`ClusterAccess` with ``controller``'s identity."""
        return ClusterAccess(
            self.server.operations,
            self.informers,
            self.recorder,
            self.options.clock,
            controller.identity(),
            lambda: self.server.pod_runtime,
        )

    def controller(self, name: str) -> Controller:
        """The running controller called ``name`` (KeyError if none)."""
        for controller in self.controllers:
            if controller.name == name:
                return controller
        raise KeyError(name)

    async def start(self) -> None:
        """Create the controllers, wire their watches, start informers and workers."""
        self.recorder.start()
        for cls in self._classes:
            controller = cls(self.access(cls), self.options)
            self.controllers.append(controller)
            for watch in controller.watches():
                informers = self.informers
                informer = informers.informer(watch.resource, metadata_only=watch.metadata_only)
                informer.add_handler(controller.handler_for(watch))
        self.informers.start()
        for controller in self.controllers:
            runtime = controller.pod_runtime()
            if runtime is not None:
                self.server.pod_runtime = runtime
        for controller in self.controllers:
            await controller.start()
        for controller in self.controllers:
            controller.run()
        log.info("controllers running: %s", ", ".join(c.name for c in self.controllers))

    async def namespace_set_up(self, name: str) -> None:
        """Wait until namespace ``name`` holds what the controllers put in every namespace
        (:meth:`Controller.namespace_objects`: ServiceAccount ``default``, ``kube-root-ca.crt``).

        Tests that list a fresh namespace then see the same objects every time. Gives up
        silently after :data:`NAMESPACE_SET_UP_SECONDS` (a deleted namespace never gets them).
        """
        wanted = [pair for c in self.controllers for pair in c.namespace_objects()]
        deadline = self.options.retry_clock.monotonic() + NAMESPACE_SET_UP_SECONDS
        while any(
            self.informers.informer(kind, metadata_only=True).get(name, obj) is None
            for kind, obj in wanted
        ):
            if self.options.retry_clock.monotonic() > deadline:
                return
            await asyncio.sleep(SET_UP_POLL_SECONDS)

    async def stop(self) -> None:
        """Stop the controllers, then the informers, then the Event recorder."""
        self.server.pod_runtime = None
        for controller in reversed(self.controllers):
            await controller.stop()
        self.controllers.clear()
        await self.informers.stop()
        await self.recorder.stop()
