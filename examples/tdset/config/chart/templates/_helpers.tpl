{{- define "operator.fullname" -}}{{ .Release.Name }}-tdset-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: tdset-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
