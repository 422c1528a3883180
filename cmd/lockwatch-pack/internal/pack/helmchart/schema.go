package helmchart

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/collectors"
)

// baseSchema is the hand-written part of values.schema.json: the chart's own values, and for the
// exporter's sections only what the chart adds to them (the Secret of a password). The
// exporter's fields are generated into it from exporterconfig's types by Schema.
//
//go:embed values.base.schema.json
var baseSchema []byte

// schemaComment opens values.schema.json ("$comment" is JSON Schema's place for notes).
var schemaComment = strings.Join(pack.Notice, " ") + " The exporter's sections (redis, scan, " +
	"namespaces, targets) follow lock-exporter's configuration types; durations and settings with " +
	"a fixed set of values are checked by the chart's templates, whose refusals say why."

var durationType = reflect.TypeFor[exporterconfig.Duration]()

// fieldKeywords adds JSON Schema keywords to a field, keyed by Go type and field as in
// exporterconfig.Choices: the bounds exporterconfig's Validate enforces, checked before the
// templates run. A field without an entry is still in the schema, by its type.
var fieldKeywords = map[string]map[string]any{
	"Scan.BatchSize":             {"minimum": 1, "maximum": collectors.MaxBatchSize},
	"Scan.MaxKeys":               {"minimum": 1},
	"Scan.TopK":                  {"minimum": 1, "maximum": collectors.MaxTopK},
	"Scan.IndexKeyBudget":        {"minimum": 1},
	"Scan.BackstopKeysPerSecond": {"minimum": 0},
	"Scan.MaxConcurrentTargets":  {"minimum": 0},
	"Namespace.Name":             {"minLength": 1},
	"Namespace.Pattern":          {"minLength": 1},
	"Target.Name":                {"pattern": "^[A-Za-z0-9][A-Za-z0-9_.:/-]*$"},
}

// requiredKeys are the keys a mapping of the type must have.
var requiredKeys = map[string][]string{"Namespace": {"name", "pattern"}, "Target": {"name"}}

// omittedFields are configuration fields the chart does not accept, with the reason. A target's
// inline password exists in the exporter only to be refused; the chart takes the Secret's name.
var omittedFields = map[string]string{"Target.InlinePassword": "a password belongs in a Secret named by existingSecret"}

// configField is one key of a configuration type's YAML form.
type configField struct {
	key   string
	owner string // the Go type and field, "Scan.Mode", the key of Choices and fieldKeywords
	typ   reflect.Type
}

// configFields lists the YAML keys of struct type t as exporterconfig decodes them: yaml tags,
// ",inline" structs' keys in line, "-" and unexported fields left out.
func configFields(t reflect.Type) []configField {
	var fields []configField
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		owner := t.Name() + "." + f.Name
		switch {
		case name == "-" || !f.IsExported() || omittedFields[owner] != "":
		case opts == "inline":
			fields = append(fields, configFields(f.Type)...)
		case name != "":
			fields = append(fields, configField{name, owner, f.Type})
		}
	}
	return fields
}

// fieldSchema is the JSON Schema of one configuration field. Durations and fixed sets carry no
// pattern or enum: helm checks the schema before any template runs and its messages cannot say
// why, so those values are left to the chart's template checks (checkSpec). They keep
// examples, which editors offer.
func fieldSchema(t reflect.Type, owner string) map[string]any {
	s := map[string]any{}
	switch choices := exporterconfig.Choices()[owner]; {
	case t == durationType:
		s["description"] = "a duration: a number and a unit (ns, us, ms, s, m, h), e.g. 10s, 1m30s"
		s["examples"] = []string{"10s", "1m30s"}
	case choices != nil && t.Kind() == reflect.String:
		s["description"] = "one of " + strings.Join(choices, ", ")
		s["examples"] = choices
	case t.Kind() == reflect.Slice:
		s["type"], s["items"] = "array", fieldSchema(t.Elem(), owner)
	case t.Kind() == reflect.Struct:
		return objectSchema(t)
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s["type"] = "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s["type"] = "number"
	case t.Kind() == reflect.Pointer:
		return fieldSchema(t.Elem(), owner)
	case t.Kind() == reflect.Map:
		s["type"] = "object"
	}
	// Any other kind is accepted as it is written: the exporter's loader judges it.
	for k, v := range fieldKeywords[owner] {
		s[k] = v
	}
	return s
}

// objectSchema is the schema of a configuration struct: its keys, nothing else.
func objectSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	for _, f := range configFields(t) {
		props[f.key] = fieldSchema(f.typ, f.owner)
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if req := requiredKeys[t.Name()]; req != nil {
		s["required"] = req
	}
	return s
}

// checkSpec is what the chart's templates check of a field (lock-exporter.checkSetting): a
// duration, one of a set, or the same of a list's items or a mapping's keys; nil when nothing.
func checkSpec(t reflect.Type, owner string) map[string]any {
	choices := exporterconfig.Choices()[owner]
	switch {
	case t.Kind() == reflect.Pointer:
		return checkSpec(t.Elem(), owner)
	case t == durationType:
		return map[string]any{"duration": true}
	case choices != nil && t.Kind() == reflect.String:
		return map[string]any{"oneOf": choices}
	case t.Kind() == reflect.Slice:
		if items := checkSpec(t.Elem(), owner); items != nil {
			return map[string]any{"items": items}
		}
	case t.Kind() == reflect.Struct:
		fields := map[string]any{}
		for _, f := range configFields(t) {
			if spec := checkSpec(f.typ, f.owner); spec != nil {
				fields[f.key] = spec
			}
		}
		if len(fields) > 0 {
			return map[string]any{"fields": fields}
		}
	}
	return nil
}

// Schema returns values.schema.json: the hand-written base with the exporter's configuration
// sections filled in from exporterconfig.Config's types.
func Schema() ([]byte, error) {
	var schema map[string]any
	if err := json.Unmarshal(baseSchema, &schema); err != nil {
		return nil, fmt.Errorf("helmchart: values.base.schema.json: %w", err)
	}
	schema["$comment"] = schemaComment
	props, _ := schema["properties"].(map[string]any)
	for _, f := range configFields(reflect.TypeFor[exporterconfig.Config]()) {
		base, _ := props[f.key].(map[string]any)
		if base == nil {
			base = map[string]any{}
		}
		props[f.key] = mergeSchema(base, fieldSchema(f.typ, f.owner))
	}
	return marshalIndent(schema)
}

// mergeSchema adds gen's keywords to base where base has none; where both hold an object
// (properties, items) they are merged the same way, so the base may add keys (existingSecret)
// and override a generated keyword.
func mergeSchema(base, gen map[string]any) map[string]any {
	for k, g := range gen {
		b, ok := base[k]
		if !ok {
			base[k] = g
			continue
		}
		bm, bok := b.(map[string]any)
		gm, gok := g.(map[string]any)
		if bok && gok {
			base[k] = mergeSchema(bm, gm)
		}
	}
	return base
}

// configFieldsTemplate is templates/_exporter_config.tpl: checkSpec of every section of the
// exporter's configuration, as JSON the chart's checkConfig template reads.
func configFieldsTemplate() ([]byte, error) {
	sections := map[string]any{}
	for _, f := range configFields(reflect.TypeFor[exporterconfig.Config]()) {
		spec := checkSpec(f.typ, f.owner)
		if spec == nil {
			spec = map[string]any{}
		}
		sections[f.key] = spec
	}
	data, err := marshalIndent(sections)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(templateHeader)
	b.WriteString(`{{- /*
The sections of lock-exporter's configuration file (the chart's values of the same names), and
what lock-exporter.checkValues checks in each: "duration", "oneOf" a set, a list's "items" or a
mapping's "fields". Generated from the exporter's configuration types.
*/}}
{{- define "lock-exporter.exporterConfigSections" -}}
`)
	b.Write(data)
	b.WriteString("{{- end }}\n")
	return b.Bytes(), nil
}

func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("helmchart: %w", err)
	}
	return b.Bytes(), nil
}
