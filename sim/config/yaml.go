package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileError locates an error in a settings file. Err is the underlying
// error (a *ValueError, an *UnknownKeyError, or a YAML syntax error).
type FileError struct {
	File string
	Line int // 1-based; 0 when the error has no line
	Err  error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// yaml11Bool matches the plain scalars SnakeYAML (YAML 1.1, the parser of
// Flink 1.20's config.yaml) reads as booleans.
var yaml11Bool = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)

// yamlLine finds the line number in a yaml.v3 error text ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// LoadYAML reads settings from a Flink 1.20 config.yaml-style file and sets
// them in c. As in Flink's GlobalConfiguration, nested mappings are
// flattened by joining keys with "." (parallelism: {default: 2} is
// parallelism.default: 2), flat and nested forms may be mixed, and when two
// forms name the same key the later one wins. A key repeated in one mapping
// is refused, as SnakeYAML does. Plain scalars yes/no/on/off are booleans as
// in YAML 1.1. Unlike Flink, a key the simulator does not know is an error
// (with a suggestion), so a typo is never silently ignored.
//
// Every error found is reported, in file order, each as a *FileError naming
// FILE:LINE; they are joined with errors.Join. On any error c is unchanged.
func (c *Config) LoadYAML(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &FileError{File: path, Err: err}
	}
	return c.loadYAML(path, data)
}

func (c *Config) loadYAML(name string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := 0, err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return &FileError{File: name, Line: line, Err: errors.New(msg)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file or only comments
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &FileError{File: name, Line: root.Line, Err: errors.New("expected a mapping of setting keys to values")}
	}
	next := *c
	var errs []error
	fail := func(line int, err error) { errs = append(errs, &FileError{File: name, Line: line, Err: err}) }
	var walk func(prefix string, m *yaml.Node)
	walk = func(prefix string, m *yaml.Node) {
		seen := make(map[string]int, len(m.Content)/2)
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := deref(m.Content[i]), deref(m.Content[i+1])
			if k.Kind != yaml.ScalarNode {
				fail(k.Line, errors.New("a setting key must be plain text"))
				continue
			}
			if first, dup := seen[k.Value]; dup {
				fail(k.Line, fmt.Errorf("found duplicate key %s (first at line %d)", k.Value, first))
				continue
			}
			seen[k.Value] = k.Line
			key := prefix + k.Value
			switch v.Kind {
			case yaml.MappingNode:
				walk(key+".", v)
			case yaml.ScalarNode:
				if v.Tag == "!!null" {
					fail(v.Line, fmt.Errorf("%s: a value is missing", key))
					continue
				}
				value := v.Value
				if v.Style == 0 && yaml11Bool.MatchString(value) {
					switch strings.ToLower(value) {
					case "yes", "true", "on":
						value = "true"
					default:
						value = "false"
					}
				}
				if err := next.Set(key, value); err != nil {
					line := v.Line
					var unknown *UnknownKeyError
					if errors.As(err, &unknown) {
						line = k.Line
					}
					fail(line, err)
				}
			default:
				fail(v.Line, fmt.Errorf("%s: expected a single value, not a list", key))
			}
		}
	}
	walk("", root)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*c = next
	return nil
}

// deref follows YAML aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
