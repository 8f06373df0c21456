package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"gopkg.in/yaml.v3"
)

// yaml.v3 puts positions in message text: "yaml: line 3: ..." for syntax
// errors, "line 3: ..." for each type error.
var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// quotedValueRE finds the value a type error quotes: "cannot unmarshal !!str `four` into int".
var quotedValueRE = regexp.MustCompile("cannot unmarshal \\S+ `([^`]*)`")

// Load reads, decodes, defaults and validates the config file at path. A
// config that cannot be used is reported as Problems, one per fault, each
// with its position in the file.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path)
}

// Parse is Load for data already read; filename is used in messages only.
// Unknown keys are refused: a misspelt option silently left at its default
// is worse than an error.
func Parse(data []byte, filename string) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p := positioned(filename, err.Error(), err)
		if p.Line == 0 && strings.Contains(p.Message, "end of stream") {
			// yaml.v3 gives no line for an unclosed quote or bracket; the
			// end of the file is where the reader ran out.
			p.Line = bytes.Count(data, []byte("\n")) + 1
		}
		return Config{}, Problems{p}
	}
	root := documentRoot(&doc)
	if root != nil && resolveAlias(root).Kind != yaml.MappingNode {
		return Config{}, Problems{{File: filename, Line: root.Line, Column: root.Column,
			Message: "the config must be a mapping of sections (namespace:, redis:, pools:, ...)"}}
	}

	if err := singleDocument(data); err != nil {
		return Config{}, Problems{positioned(filename, err.Error(), err)}
	}

	var ps Problems
	if root != nil {
		checkShape(root, reflect.TypeFor[Config](), func(n *yaml.Node, field, msg string) {
			ps = append(ps, &Problem{File: filename, Line: n.Line, Column: n.Column, Field: field, Message: msg})
		})
	}
	var cfg Config
	var err error
	if len(ps) == 0 {
		cfg, err = decodeStrict(data)
	} else {
		// checkShape took its findings out of the tree; decoding what is left
		// reports the remaining type errors in the same round.
		err = root.Decode(&cfg)
	}
	ps = append(ps, decodeProblems(filename, root, err)...)
	if len(ps) > 0 {
		ps.sortByPosition()
		return Config{}, ps
	}

	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Config{}, validationProblems(filename, root, err)
	}
	return cfg, nil
}

// decodeStrict decodes with unknown keys refused. checkShape has already
// reported those with their paths; this is the backstop for any it cannot
// see, such as keys brought in by a merge ("<<").
func decodeStrict(data []byte) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, err
	}
	return cfg, nil
}

// singleDocument refuses a second YAML document, which a stray "---" would
// otherwise hide from every reader.
func singleDocument(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, extra yaml.Node
	if err := dec.Decode(&first); err != nil {
		return nil // empty, or a syntax error already reported
	}
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("yaml: line %d: a second YAML document; a config file holds one", extra.Line)
	}
	return nil
}

// decodeProblems turns the decoder's error into problems, placing type
// errors at the field they concern.
func decodeProblems(filename string, root *yaml.Node, err error) Problems {
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return Problems{positioned(filename, err.Error(), err)}
	}
	var ps Problems
	for _, msg := range te.Errors {
		p := positioned(filename, msg, err)
		if strings.Contains(msg, "cannot unmarshal") {
			var quoted string
			if m := quotedValueRE.FindStringSubmatch(msg); m != nil {
				quoted = m[1]
			}
			p.Field, p.Column = fieldAtLine(root, p.Line, quoted)
		}
		ps = append(ps, p)
	}
	return ps
}

// positioned parses yaml.v3's "line N: message" into a Problem.
func positioned(filename, msg string, err error) *Problem {
	p := &Problem{File: filename, Message: strings.TrimPrefix(msg, "yaml: "), Err: err}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Message = m[2]
	}
	return p
}

// validationProblems places each field error of Validate in the file.
func validationProblems(filename string, root *yaml.Node, err error) Problems {
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) {
		return Problems{{File: filename, Message: err.Error(), Err: err}}
	}
	ps := make(Problems, 0, len(ve.Problems))
	for _, fe := range ve.Problems {
		line, col := locate(root, fe.Field)
		ps = append(ps, &Problem{File: filename, Line: line, Column: col, Field: fe.Field, Message: fe.Message, Err: fe})
	}
	ps.sortByPosition()
	return ps
}
