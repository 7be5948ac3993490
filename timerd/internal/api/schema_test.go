package api

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// checkSchema validates v (as encoding/json decodes into any) against the
// subset of JSON Schema openapi.json uses for answers: $ref to
// #/components/schemas, type (a name or a list of names), required,
// properties, additionalProperties (false, or a schema), enum, items.
// Annotations (description, format, bounds) are not checked. It returns the
// first violation, with its path.
func checkSchema(doc map[string]any, schema map[string]any, v any, path string) error {
	if r, ok := schema["$ref"].(string); ok {
		name, ok := strings.CutPrefix(r, "#/components/schemas/")
		target, _ := dig(doc, "components", "schemas", name).(map[string]any)
		if !ok || target == nil {
			return fmt.Errorf("%s: unresolved $ref %q", path, r)
		}
		return checkSchema(doc, target, v, path)
	}
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
			return fmt.Errorf("%s: %s, want %v", path, jsonType(v), types)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v not in %v", path, v, enum)
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asList(schema["required"]) {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: missing required %q", path, r)
			}
		}
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			sub, known := props[k].(map[string]any)
			if !known {
				switch extra := schema["additionalProperties"].(type) {
				case bool:
					if !extra {
						return fmt.Errorf("%s: property %q not in the schema", path, k)
					}
					continue
				case map[string]any:
					sub = extra
				default:
					continue
				}
			}
			if err := checkSchema(doc, sub, obj[k], path+"."+k); err != nil {
				return err
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := checkSchema(doc, items, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func asList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

// dig follows keys into nested objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
