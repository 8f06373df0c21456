package config

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// locate finds where a dotted field path such as "pools.spot.billing" or
// "templates.hello.command[0]" is written. A path that is not in the file
// (the value is missing or came from a default) resolves to its nearest
// parent that is, which is where the fix goes. Keys may contain dots
// (template names do), so at each mapping the longest matching key wins.
// It returns 0, 0 for an empty document.
func locate(root *yaml.Node, path string) (line, col int) {
	n := root
	if n == nil {
		return 0, 0
	}
	line, col = n.Line, n.Column
	rest := path
	for rest != "" {
		n = resolveAlias(n)
		switch n.Kind {
		case yaml.MappingNode:
			best, bestLen := -1, 0
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if len(k) > bestLen && (rest == k || strings.HasPrefix(rest, k+".") || strings.HasPrefix(rest, k+"[")) {
					best, bestLen = i, len(k)
				}
			}
			if best < 0 {
				return line, col
			}
			// Point at the key: a block value starts on the next line, and
			// the key is what the reader looks for.
			line, col = n.Content[best].Line, n.Content[best].Column
			n = n.Content[best+1]
			rest = strings.TrimPrefix(rest[bestLen:], ".")
		case yaml.SequenceNode:
			end := strings.IndexByte(rest, ']')
			if !strings.HasPrefix(rest, "[") || end < 0 {
				return line, col
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i >= len(n.Content) {
				return line, col
			}
			n = n.Content[i]
			line, col = n.Line, n.Column
			rest = strings.TrimPrefix(rest[end+1:], ".")
		default:
			return line, col
		}
	}
	// A scalar's own position is more precise than its key's when the
	// complaint is about the value.
	if n = resolveAlias(n); n.Kind == yaml.ScalarNode {
		line, col = n.Line, n.Column
	}
	return line, col
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// documentRoot returns the top mapping of a parsed document, or nil when the
// document is empty.
func documentRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return doc.Content[0]
	}
	if doc.Kind == 0 {
		return nil
	}
	return doc
}

// fieldAtLine finds the value a decoder error is about, given only its line
// and the value as the decoder quoted it (possibly cut short to "abcdefg...";
// empty for a list or mapping). It returns the field path and column, or ""
// and 0 when nothing on that line fits.
func fieldAtLine(root *yaml.Node, line int, quoted string) (field string, col int) {
	type candidate struct {
		path string
		n    *yaml.Node
		// onKeyLine: the value starts on its key's line. A block value starts
		// on the line after its key, where it competes with what is inside it.
		onKeyLine bool
	}
	var found []candidate
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		visit := func(v *yaml.Node, p string, keyLine int) {
			if v.Line == line {
				found = append(found, candidate{p, v, keyLine == line})
			}
			walk(v, p)
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				visit(n.Content[i+1], joinPath(path, k.Value), k.Line)
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				visit(item, path+"["+strconv.Itoa(i)+"]", item.Line)
			}
		}
	}
	if root == nil {
		return "", 0
	}
	walk(root, "")
	prefix, cut := strings.CutSuffix(quoted, "...")
	for _, c := range found {
		isScalar := c.n.Kind == yaml.ScalarNode
		switch {
		case quoted == "" && !isScalar && c.onKeyLine,
			isScalar && quoted != "" && (c.n.Value == quoted || cut && strings.HasPrefix(c.n.Value, prefix)):
			return c.path, c.n.Column
		}
	}
	return "", 0
}
