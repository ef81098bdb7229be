"""What the server serves, and the generic semantics of every operation on it.

``served_resources`` describes one group/version/resource; ``builtin_resources`` lists the
built-in ones and ``crd_serving`` turns CustomResourceDefinitions into more of them as they are
written; ``resource_registry`` is the table of all of them and builds the discovery documents.
``object_operations`` is kube-apiserver's generic registry: create, get, list, update, patch
and delete with resourceVersion checks, generation, finalizers and graceful deletion.
``kind_behaviour`` is the hook through which a kind changes those semantics (see ``kinds/``);
``selection`` applies label and field selectors; ``object_decoding`` makes the checks decoding
makes before validation; ``builtin_defaults`` fills in upstream defaults.
"""
