"""The root CA publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace, whose ``ca.crt``
is the certificate authority that clients of the API server trust (kube-controller-manager's
``root-ca-cert-publisher``). Pods read it to verify the API server; it is put back when deleted
or edited, and not created in a terminating namespace.
"""
