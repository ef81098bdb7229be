"""Authorization: may this user do this, on this object, here? (kube-apiserver's RBAC.)

A request reaches authorization once authentication stored its user on it
(:func:`~setpoint.cluster.apiserver.auth.request_user.request_user`). ``Impersonate-*``
headers may then swap that user for another, if the caller may ``impersonate`` it
(:mod:`.impersonation`). The request becomes :class:`~.attributes.Attributes` — verb,
namespace, API group, resource, subresource and name, or a non-resource path — exactly as
upstream's ``RequestInfoFactory`` derives them (:mod:`.attributes`), and an authorizer
decides (:mod:`.authorizers`): members of ``system:masters`` may do anything, everyone else
what the RBAC rules bound to their name and groups allow (:mod:`.rules`), looked up in an
index of Roles, ClusterRoles and bindings kept current by a storage watch
(:mod:`.rbac_index`). A refusal is upstream's 403 (:mod:`.forbidden`).

Around that: the default ClusterRoles and bindings of a 1.32 cluster (:mod:`.bootstrap_policy`),
ClusterRole aggregation (:mod:`.aggregation`), and escalation prevention on writes of roles
and bindings (:mod:`.escalation`). :class:`~.access_control.AccessControl` holds it all for
one server; ``--authorization AlwaysAllow`` swaps the authorizer for one that allows
everything.
"""
