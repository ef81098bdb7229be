"""Endpoints and EndpointSlices for Services with a selector (``pkg/controller/endpoint``,
``pkg/controller/endpointslice``): the pods matching the selector that have an IP, ready or
not, with the Service's ports resolved per pod (named target ports looked up in the pod's
container ports), kept current as pods come, go and change readiness.
"""
