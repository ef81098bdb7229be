{{- define "operator.fullname" -}}{{ .Release.Name }}-podset-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: podset-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
