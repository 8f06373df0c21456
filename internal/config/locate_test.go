package config

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLocate(t *testing.T) {
	const doc = `templates:
  v1:
    command: [a]
  v1.2:
    command:
      - b
      - c
pools:
  base: &base
    kind: spot
  spot: *base
`
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	root := documentRoot(&n)
	cases := []struct {
		path      string
		line, col int
	}{
		{"templates.v1.command", 3, 5},      // a flow list: the key's position
		{"templates.v1.2.command[1]", 7, 9}, // the longest matching key wins over "v1"
		{"templates.v1.2.command[9]", 5, 5}, // index out of range: the list's key
		{"templates.v1.2.timeout", 4, 3},    // missing: the nearest parent
		{"templates.v3", 1, 1},              // missing template: "templates"
		{"pools.spot.kind", 10, 11},         // through an alias to the anchored value
		{"watermarks.low", 1, 1},            // missing section: the document
		{"", 1, 1},
	}
	for _, c := range cases {
		line, col := locate(root, c.path)
		if line != c.line || col != c.col {
			t.Errorf("locate(%q) = %d:%d, want %d:%d", c.path, line, col, c.line, c.col)
		}
	}
	if line, col := locate(nil, "pools"); line != 0 || col != 0 {
		t.Errorf("locate in an empty document = %d:%d, want 0:0", line, col)
	}
}
