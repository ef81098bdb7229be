"""The certificate signer: issues the certificates of approved CertificateSigningRequests
(kube-controller-manager's ``csrsigning`` controller).

It signs for ``kubernetes.io/kube-apiserver-client`` (and the kubelet's client signer,
``kubernetes.io/kube-apiserver-client-kubelet``) with the cluster's certificate authority, the
one the API server trusts for client certificates, so an issued certificate authenticates its
subject's common name as the user and its organizations as groups. Requests whose usages the
signer does not allow get a ``Failed`` condition instead, as upstream. Without a CA of its own
(``--client-ca`` names another one) the signer stays idle: only that CA's holder can sign.
"""
