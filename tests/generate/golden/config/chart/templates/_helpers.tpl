{{- define "operator.fullname" -}}{{ .Release.Name }}-foo-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: foo-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
