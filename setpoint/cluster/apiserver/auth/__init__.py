"""Who is calling, and what they may do.

:mod:`.authentication` finds who is calling: the admin bearer token of the kubeconfig
(:data:`identity.ADMIN`, a member of ``system:masters``), ServiceAccount tokens or client
certificates; the :class:`~.identity.UserInfo` found is kept on the request. :mod:`.reviews`
answers the review APIs clients use to ask about that identity: ``SelfSubjectReview``
(``kubectl auth whoami``) and ``SelfSubjectAccessReview`` (``kubectl auth can-i``). RBAC
authorization will replace the "only system:masters is allowed" decision there.
"""
