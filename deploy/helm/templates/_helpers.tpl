{{- /*
Names, labels and the derived values every template shares. Names follow `helm create`: the
chart's name (nameOverride), the object names `<release>-<name>` (the release name alone when it
already holds the name; fullnameOverride replaces it), cut to 63 characters, a DNS label's limit.
*/}}

{{- define "mapper-service.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mapper-service.fullname" -}}
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

{{- define "mapper-service.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- /* The labels that select the pods: fixed for a release's life (a Deployment's selector cannot change). */}}
{{- define "mapper-service.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mapper-service.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- /* Every object's labels: the selector's, and the chart, version and manager. */}}
{{- define "mapper-service.labels" -}}
helm.sh/chart: {{ include "mapper-service.chart" . }}
{{ include "mapper-service.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- /* Whether the pods get credentials from a Secret (the chart's own, or existingSecret). */}}
{{- define "mapper-service.credentials" -}}
{{- if or .Values.existingSecret .Values.redis.url .Values.auth.secret }}true{{ end }}
{{- end }}

{{- define "mapper-service.secretName" -}}
{{- .Values.existingSecret | default (include "mapper-service.fullname" .) }}
{{- end }}

{{- /* store.url, or "" (also when a values file of an older chart has no `store`). */}}
{{- define "mapper-service.storeUrl" -}}
{{- (default dict .Values.store).url | default "" }}
{{- end }}

{{- /* Whether the chart renders its own Secret: redis.url, auth.secret or store.url given, and no existingSecret. */}}
{{- define "mapper-service.ownSecret" -}}
{{- if and (not .Values.existingSecret) (or .Values.redis.url .Values.auth.secret (include "mapper-service.storeUrl" .)) }}true{{ end }}
{{- end }}

{{- /*
The checksum of the chart's Secret, in the pod template so that a change rolls the pods (the init
container and STORE_URL read it at start). store.url is added only when set: a release without
it keeps the checksum it had before the chart knew the store, and an upgrade rolls no pod.
*/}}
{{- define "mapper-service.secretChecksum" -}}
{{- $text := printf "%s\n%s" .Values.redis.url .Values.auth.secret }}
{{- with include "mapper-service.storeUrl" . }}
{{- $text = printf "%s\n%s" $text . }}
{{- end }}
{{- $text | sha256sum }}
{{- end }}

{{- /*
A CPU quantity (2, 1.5, "500m") as cores. The argument names the value, for the error.
*/}}
{{- define "mapper-service.cores" -}}
{{- $cpu := toString (index . 1) }}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?m?$" $cpu) }}
{{- fail (printf "%s: %q is not a CPU quantity this chart reads (cores such as 2 or 1.5, or millicores such as 500m)" (index . 0) $cpu) }}
{{- end }}
{{- if hasSuffix "m" $cpu }}{{ divf (trimSuffix "m" $cpu) 1000 }}{{ else }}{{ float64 $cpu }}{{ end }}
{{- end }}

{{- /*
A memory quantity (512Mi, 1Gi, 1G, 536870912) in MiB. The argument names the value, for the error.
*/}}
{{- define "mapper-service.mebibytes" -}}
{{- $quantity := toString (index . 1) }}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$" $quantity) }}
{{- fail (printf "%s: %q is not a memory quantity this chart reads (such as 512Mi, 1Gi or 1G)" (index . 0) $quantity) }}
{{- end }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $quantity }}
{{- $unit := trimPrefix $number $quantity }}
{{- $bytes := get (dict "" 1 "k" 1000 "Ki" 1024 "M" 1000000 "Mi" 1048576 "G" 1000000000 "Gi" 1073741824 "T" 1000000000000 "Ti" 1099511627776) $unit }}
{{- divf (mulf $number $bytes) 1048576 }}
{{- end }}

{{- /*
The options the service reads (options.json), as JSON. Credentials are refused here: they belong
in redis.url, auth.secret and store.url (or existingSecret), which reach the pod through a Secret;
the rest of options.store needs a store URL. The worker threads, when options.isolation leaves them
out, are one per whole core of resources.limits.cpu (else resources.requests.cpu; at least one),
not the node's cores the service would count; and threads × memoryMb plus 128 MiB for the main
thread must fit in resources.limits.memory.
*/}}
{{- define "mapper-service.options" -}}
{{- $options := deepCopy (default dict .Values.options) }}
{{- if and (kindIs "map" $options.auth) (hasKey $options.auth "secret") }}
{{- fail "options.auth.secret would be written into a ConfigMap: give it as auth.secret (the chart puts it in a Secret) or in existingSecret" }}
{{- end }}
{{- if and (kindIs "map" $options.rateLimit) (hasKey $options.rateLimit "redis") }}
{{- fail "options.rateLimit.redis would be written into a ConfigMap (with its password): give it as redis.url (the chart puts it in a Secret) or in existingSecret" }}
{{- end }}
{{- if and (kindIs "map" $options.store) (hasKey $options.store "url") }}
{{- fail "options.store.url would be written into a ConfigMap (with its password): give it as store.url (the chart puts it in a Secret) or in existingSecret (key store-url)" }}
{{- end }}
{{- if and (kindIs "map" $options.store) (not (include "mapper-service.storeUrl" .)) (not .Values.existingSecret) }}
{{- fail "options.store without store.url: the service needs the store's URL to start; give it as store.url (the chart puts it in a Secret) or in existingSecret (key store-url)" }}
{{- end }}
{{- if and .Values.auth.secret (kindIs "map" $options.auth) (or (hasKey $options.auth "publicKey") (hasKey $options.auth "jwksUri")) }}
{{- fail "auth.secret and options.auth.publicKey or options.auth.jwksUri: the service takes exactly one key strategy" }}
{{- end }}
{{- if kindIs "invalid" $options.isolation }}
{{- $_ := set $options "isolation" dict }}
{{- end }}
{{- if kindIs "map" $options.isolation }}
{{- $resources := default dict .Values.resources }}
{{- if not (hasKey $options.isolation "threads") }}
{{- $cpu := dig "limits" "cpu" "" $resources }}
{{- $from := "resources.limits.cpu" }}
{{- if not $cpu }}
{{- $cpu = dig "requests" "cpu" "1" $resources }}
{{- $from = "resources.requests.cpu" }}
{{- end }}
{{- $cores := include "mapper-service.cores" (list $from $cpu) | float64 }}
{{- $_ := set $options.isolation "threads" (max 1 (floor $cores | int)) }}
{{- end }}
{{- $memory := dig "limits" "memory" "" $resources }}
{{- if $memory }}
{{- $limit := include "mapper-service.mebibytes" (list "resources.limits.memory" $memory) | float64 }}
{{- $threads := $options.isolation.threads | int }}
{{- $perThread := default 256 $options.isolation.memoryMb | int }}
{{- if gt (add (mul $threads $perThread) 128 | float64) $limit }}
{{- fail (printf "options.isolation: %d %s × %d MiB (memoryMb) + 128 MiB for the main thread do not fit in resources.limits.memory (%s): lower options.isolation.threads or memoryMb, or raise the limit" $threads (ternary "thread" "threads" (eq $threads 1)) $perThread (toString $memory)) }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson $options }}
{{- end }}
