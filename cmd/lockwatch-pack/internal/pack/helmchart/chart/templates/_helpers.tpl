{{/* The chart's name, or nameOverride. */}}
{{- define "lock-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: fullnameOverride, else the release name when it already contains the chart's
name, else "<release>-<chart>"; cut to 63 characters, the limit of a DNS label.
*/}}
{{- define "lock-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels a Deployment selects its pods by; they never change after install. */}}
{{- define "lock-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lock-exporter.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
The labels of an object: the chart's, then commonLabels, then the maps in .extra, a later map
winning over an earlier one; the selector labels above win over all, as the Deployment and
Service select by them. Built as one map and written with toYaml, so a label named in two maps
is written once (twice is a duplicate key the API refuses) and every value is quoted as needed.
Called with (dict "ctx" $ "extra" (list map…)).
*/}}
{{- define "lock-exporter.labelsWith" -}}
{{- $ctx := .ctx }}
{{- $l := dict
  "helm.sh/chart" (printf "%s-%s" $ctx.Chart.Name $ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-")
  "app.kubernetes.io/version" (toString $ctx.Chart.AppVersion)
  "app.kubernetes.io/managed-by" $ctx.Release.Service
  "app.kubernetes.io/part-of" "lockwatch" }}
{{- range $m := prepend .extra $ctx.Values.commonLabels }}
{{- range $k, $v := $m }}{{ $_ := set $l $k $v }}{{ end }}
{{- end }}
{{- range $k, $v := include "lock-exporter.selectorLabels" $ctx | fromYaml }}{{ $_ := set $l $k $v }}{{ end }}
{{- toYaml $l }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "lock-exporter.labels" -}}
{{ include "lock-exporter.labelsWith" (dict "ctx" . "extra" list) }}
{{- end }}

{{/*
Labels of the objects the Prometheus Operator selects (ServiceMonitor, PodMonitor,
PrometheusRule): the common labels plus monitoringLabels, e.g. kube-prometheus-stack's
release: <its release>.
*/}}
{{- define "lock-exporter.monitoringLabels" -}}
{{ include "lock-exporter.labelsWith" (dict "ctx" . "extra" (list .Values.monitoringLabels)) }}
{{- end }}

{{/*
The image reference: the tag defaults to the chart's appVersion, the release it was cut with;
a digest is appended (repository:tag@digest), and the runtime pulls by it.
*/}}
{{- define "lock-exporter.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}

{{/*
"true" when the chart serves one Redis on /metrics (redis.addr, cluster_addrs or sentinel_addrs
set), "" when it serves only targets.
*/}}
{{- define "lock-exporter.singleRedis" -}}
{{- if or .Values.redis.addr .Values.redis.cluster_addrs .Values.redis.sentinel_addrs }}true{{ end }}
{{- end }}

{{/* Where the single Redis' password Secret is mounted in the container. */}}
{{- define "lock-exporter.redisPasswordFile" -}}
/etc/lock-exporter/secrets/redis/password
{{- end }}

{{/*
The exporter's configuration file (docs/exporter.md), built as data and written with toYaml so
values never splice into YAML text. Targets keep every exporter field they were given; their
existingSecret becomes a password_file, the Secret mounted at /etc/lock-exporter/secrets/target-<i>.
*/}}
{{- define "lock-exporter.config" -}}
{{- $cfg := dict }}
{{- /* Sections the chart passes as given (namespaces, scan, and any the exporter gains). */}}
{{- range $key, $_ := include "lock-exporter.exporterConfigSections" . | fromJson }}
{{- if and (not (has $key (list "redis" "targets"))) (get $.Values $key) }}{{ $_ := set $cfg $key (get $.Values $key) }}{{ end }}
{{- end }}
{{- if include "lock-exporter.singleRedis" . }}
{{- $redis := dict }}
{{- range $k, $v := omit .Values.redis "existingSecret" "existingSecretPasswordKey" }}
{{- if $v }}{{ $_ := set $redis $k $v }}{{ end }}
{{- end }}
{{- if .Values.redis.existingSecret }}
{{- $_ := set $redis "password_file" (include "lock-exporter.redisPasswordFile" .) }}
{{- end }}
{{- $_ := set $cfg "redis" $redis }}
{{- end }}
{{- if .Values.targets }}
{{- $targets := list }}
{{- range $i, $t := .Values.targets }}
{{- $out := omit $t "existingSecret" "existingSecretPasswordKey" }}
{{- if $t.existingSecret }}
{{- $_ := set $out "password_file" (printf "/etc/lock-exporter/secrets/target-%d/password" $i) }}
{{- end }}
{{- $targets = append $targets $out }}
{{- end }}
{{- $_ := set $cfg "targets" $targets }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/*
A duration of the schema's form (1m30s, 500ms) in milliseconds, for comparing two of them.
*/}}
{{- define "lock-exporter.milliseconds" -}}
{{- $ms := 0 }}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" . -1 }}
{{- $n := regexFind "^[0-9]+" . }}
{{- $ms = add $ms (mul $n (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000) (trimPrefix $n .))) }}
{{- end }}
{{- $ms }}
{{- end }}

{{/*
A memory size in bytes: Go's GOMEMLIMIT form (100MiB) or a Kubernetes quantity in whole units
(128Mi, 512M, 134217728); -1 for anything else (0.5Gi), which is then not compared.
*/}}
{{- define "lock-exporter.bytes" -}}
{{- $units := dict "" 1 "B" 1 "k" 1000 "Ki" 1024 "KiB" 1024 "M" 1000000 "Mi" 1048576 "MiB" 1048576 "G" 1000000000 "Gi" 1073741824 "GiB" 1073741824 "T" 1000000000000 "Ti" 1099511627776 "TiB" 1099511627776 }}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) }}
{{- /* A bare number in values.yaml: helm reads it as a float64. */}}
{{- int64 . }}
{{- else }}
{{- $s := toString . }}
{{- $n := regexFind "^[0-9]+" $s }}
{{- $unit := trimPrefix $n $s }}
{{- if and $n (hasKey $units $unit) }}{{ mul $n (get $units $unit) }}{{ else }}-1{{ end }}
{{- end }}
{{- end }}

{{/*
Refuses, naming the value and the reason, what helm's schema check cannot explain: a setting of
the exporter's configuration that is no duration or not one of its set (the sections and their
checks are generated from the exporter's types in _exporter_config.tpl), and image.tag latest.
*/}}
{{- define "lock-exporter.checkValues" -}}
{{- if eq (toString .Values.image.tag) "latest" }}
{{- fail (printf "lock-exporter: image.tag \"latest\" is refused: it names no release, so a restart may run another exporter than the one this chart's rules and dashboards (cut for %s) were made for; leave image.tag empty for %s or give a release tag" .Chart.AppVersion .Chart.AppVersion) }}
{{- end }}
{{- range $key, $spec := include "lock-exporter.exporterConfigSections" . | fromJson }}
{{- if hasKey $.Values $key }}
{{- include "lock-exporter.checkSetting" (dict "spec" $spec "value" (get $.Values $key) "path" $key) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Checks one value (dict "spec" "value" "path") against its spec: {"duration": true}, {"oneOf":
[…]}, {"items": spec} for each item of a list, {"fields": {key: spec}} for each key of a mapping.
A value of the wrong shape is left to the schema, which refuses it first.
*/}}
{{- define "lock-exporter.checkSetting" -}}
{{- $spec := .spec }}{{- $v := .value }}{{- $path := .path }}
{{- if $spec.duration }}
{{- if not (and (kindIs "string" $v) (regexMatch "^[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$" $v)) }}
{{- fail (printf "lock-exporter: %s %s is not a duration: write a number and a unit (ns, us, ms, s, m, h), e.g. 10s, 1m30s, 500ms" $path (toJson $v)) }}
{{- end }}
{{- else if $spec.oneOf }}
{{- if not (has (toString $v) $spec.oneOf) }}
{{- fail (printf "lock-exporter: %s %s is not one the exporter accepts: want one of %s" $path (toJson $v) (join ", " $spec.oneOf)) }}
{{- end }}
{{- else if and $spec.items (kindIs "slice" $v) }}
{{- range $i, $item := $v }}
{{- include "lock-exporter.checkSetting" (dict "spec" $spec.items "value" $item "path" (printf "%s[%d]" $path $i)) }}
{{- end }}
{{- else if and $spec.fields (kindIs "map" $v) }}
{{- range $key, $fieldSpec := $spec.fields }}
{{- if hasKey $v $key }}
{{- include "lock-exporter.checkSetting" (dict "spec" $fieldSpec "value" (get $v $key) "path" (printf "%s.%s" $path $key)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
