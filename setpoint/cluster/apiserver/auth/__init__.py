"""Who is calling, and what they may do.

:mod:`.authentication` finds who is calling: the admin bearer token of the kubeconfig
(:data:`identity.ADMIN`, a member of ``system:masters``), ServiceAccount tokens or client
certificates; :mod:`.request_user` is where it leaves the user of a request for everything
after it. :mod:`.authorization` decides what that user may do (RBAC, impersonation, escalation
prevention), and :mod:`.reviews` answers the review APIs clients use to ask about it:
``SelfSubjectReview`` (``kubectl auth whoami``), ``SelfSubjectAccessReview`` and
``SubjectAccessReview`` (``kubectl auth can-i``) and ``SelfSubjectRulesReview`` (``kubectl auth
can-i --list``).
"""
