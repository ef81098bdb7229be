{{- define "operator.fullname" -}}{{ .Release.Name }}-memcached-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: memcached-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
