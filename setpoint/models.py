"""Typed models of the built-in kinds (``setpoint.models.Deployment``, ``Pod`` ...).

The same classes as :mod:`setpoint.api.models`; see there. Naming one where a kind is accepted
makes reads of that kind return instances of it::

    from setpoint import models

    @op.reconciler(for_=Foo, owns=[models.Deployment])
    async def reconcile(ctx, request):
        for deployment in await ctx.owned(models.Deployment):
            ready = deployment.status.ready_replicas or 0
"""

from setpoint.api.models import *  # noqa: F403
from setpoint.api.models import __all__ as __all__
