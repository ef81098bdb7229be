"""Patches and apply: how a write request's body becomes the new object, and who owns what.

kube-apiserver accepts four patch types (``handlers/patch.go``). JSON patch and JSON merge patch
are generic; the other two need to know the shape of the object:

- **Strategic merge patch** (:mod:`.strategic`, built-in kinds only; custom resources get 415)
  merges lists by a key (containers by ``name``), unions primitive lists (finalizers) and
  understands the ``$patch``, ``$retainKeys``, ``$deleteFromPrimitiveList/`` and
  ``$setElementOrder/`` directives. ``kubectl apply`` (client-side) and ``kubectl patch`` send it.
- **Server-side apply** (:mod:`.server_side_apply`) merges a partial configuration into the live
  object and records which *field manager* owns which fields in ``metadata.managedFields``;
  a manager that changes a field someone else owns gets a 409 conflict unless it forces.

Both are driven by :mod:`.merge_schema`, the merge-relevant part of a schema: the
``x-kubernetes-patch-strategy``/``-patch-merge-key``/``-list-type``/``-list-map-keys``/
``-map-type`` extensions of the upstream OpenAPI definitions (from ``kubernetes-validate``) for
built-ins, and the CRD's structural schema for custom resources. Field ownership is a set of
paths (:mod:`.field_paths`, encoded as FieldsV1); :mod:`.managed_fields` keeps the entries up to
date on every write, Apply or Update. :mod:`.patch_request` picks the mechanism by Content-Type.
"""
