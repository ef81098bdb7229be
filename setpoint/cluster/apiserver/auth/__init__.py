"""Who is calling, and what they may do.

Today the local cluster has one credential, the admin bearer token written to the kubeconfig,
and one identity behind it (:data:`identity.ADMIN`, a member of ``system:masters``, allowed
everything). :mod:`.reviews` answers the review APIs clients use to ask about that identity:
``SelfSubjectReview`` (``kubectl auth whoami``) and ``SelfSubjectAccessReview`` (``kubectl auth
can-i``). Real authentication (more users, service account tokens) and RBAC authorization will
replace the fixed identity and the "always allowed" decision here, behind the same functions.
"""
