package config

import (
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/textdist"
)

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// checkShape walks the YAML tree alongside the Go type it decodes into and
// reports, with positions and field paths, what yaml.v3 reports poorly:
// unknown keys (it names the Go type, not the path) and values a
// TextUnmarshaler refuses, such as a bad duration (it stops at the first one
// and gives no line). It removes what it reports from the tree, so that
// decoding the tree afterwards still reports every type mismatch (those are
// left to the decoder) instead of stopping at the first refused value.
func checkShape(root *yaml.Node, t reflect.Type, report func(n *yaml.Node, field, msg string)) {
	c := shapeChecker{report: report, seen: map[*yaml.Node]bool{}}
	c.check(root, t, "")
}

type shapeChecker struct {
	report func(n *yaml.Node, field, msg string)
	// seen holds the anchored nodes already checked. An alias is checked
	// once, where it is defined: following every alias would take
	// exponential time on a "billion laughs" document.
	seen map[*yaml.Node]bool
}

func (c shapeChecker) check(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || c.seen[n.Alias] {
			return
		}
		n = resolveAlias(n)
	}
	if n.Anchor != "" {
		c.seen[n] = true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		// yaml.v3 decodes null to the zero value without calling UnmarshalText.
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
			v := reflect.New(t).Interface().(encoding.TextUnmarshaler)
			if err := v.UnmarshalText([]byte(n.Value)); err != nil {
				c.report(n, path, err.Error())
				n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!null", "", 0
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := yamlFields(t)
		kept := n.Content[:0:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := joinPath(path, k.Value)
			ft, ok := fields[k.Value]
			switch {
			case k.Value == "<<":
				// A merge key; the decoder checks what it brings in.
			case !ok:
				c.report(k, field, unknownFieldMessage(k.Value, fields))
				continue
			default:
				c.check(v, ft, field)
			}
			kept = append(kept, k, v)
		}
		n.Content = kept
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.check(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			c.check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// yamlFields maps the YAML keys of a struct to their field types, following
// yaml.v3's rules: the tag's name, else the lower-cased field name, and the
// keys of an inline struct as the struct's own.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			// An inline struct's keys are the outer struct's own.
			for k, ft := range yamlFields(f.Type) {
				out[k] = ft
			}
			continue
		}
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func unknownFieldMessage(key string, fields map[string]reflect.Type) string {
	known := slices.Sorted(maps.Keys(fields))
	// Suggest only near misses: short keys tolerate one slip, longer ones more.
	if best := textdist.Nearest(key, known, 2+len(key)/4); best != "" {
		return fmt.Sprintf("unknown field %q; did you mean %q?", key, best)
	}
	return fmt.Sprintf("unknown field %q (known here: %s)", key, strings.Join(known, ", "))
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
