{{- define "operator.fullname" -}}{{ .Release.Name }}-cnat-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: cnat-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
