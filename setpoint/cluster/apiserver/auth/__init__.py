"""Who is calling, and what they may do.

:mod:`.identity` describes users (:data:`identity.ADMIN` is the admin token's user, a member
of ``system:masters``); :mod:`.request_user` is where authentication leaves the user of a
request for everything after it. :mod:`.authorization` decides what that user may do (RBAC,
impersonation, escalation prevention), and :mod:`.reviews` answers the review APIs clients
use to ask about it: ``SelfSubjectReview`` (``kubectl auth whoami``),
``SelfSubjectAccessReview`` and ``SubjectAccessReview`` (``kubectl auth can-i``) and
``SelfSubjectRulesReview`` (``kubectl auth can-i --list``).
"""
