package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flinksim/flinksim/sim/input"
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

// core12Int matches the plain scalars that YAML 1.2's Core schema reads as
// integers written in octal (0o17) or hexadecimal (0x1F). Flink 1.20 parses
// config.yaml with snakeyaml-engine's Core schema (YamlParserUtils) and
// turns the integer it reads into text in decimal before parsing an option
// (ConfigurationUtils.convertToInt: Integer.parseInt(o.toString())), so
// parallelism.default: 0x10 is 16. Decimal integers, floats and every other
// scalar reach the option parser as written. YAML 1.1's yes/no/on/off are
// plain strings in YAML 1.2: a boolean option refuses them, as Flink's
// ConfigurationUtils.convertToBoolean does.
var core12Int = regexp.MustCompile(`^(?:0o[0-7]+|0x[0-9a-fA-F]+)$`)

// core12Value is the text Flink's option parser gets for a scalar written
// value in style style (0: plain): a Core schema octal or hexadecimal
// integer in decimal, a Core schema boolean (true, True, TRUE, false, ...)
// as Boolean.toString writes it, anything else unchanged.
func core12Value(value string, style yaml.Style) string {
	if style != 0 {
		return value
	}
	switch value {
	case "true", "True", "TRUE":
		return "true"
	case "false", "False", "FALSE":
		return "false"
	}
	if !core12Int.MatchString(value) {
		return value
	}
	n, ok := new(big.Int).SetString(value[2:], map[byte]int{'o': 8, 'x': 16}[value[1]])
	if !ok {
		return value
	}
	return n.String()
}

// yamlLine finds the line number in a yaml.v3 error text ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Limits of a settings file's YAML: Flink's SnakeYAML refuses more than 50
// aliases to collections (LoaderOptions.maxAliasesForCollections, the
// "billion laughs" guard); a settings file has a few hundred keys at most.
const (
	maxYAMLCollectionAliases = 50
	maxYAMLSettings          = 10000
	maxYAMLErrors            = 20 // reported at most; the load stops there
)

// LoadYAML reads settings from a Flink 1.20 config.yaml-style file and sets
// them in c. As in Flink's GlobalConfiguration, nested mappings are
// flattened by joining keys with "." (parallelism: {default: 2} is
// parallelism.default: 2), and flat and nested forms may be mixed; but one
// key given in two forms (parallelism.default: 3 and parallelism: {default:
// 5}) is refused, naming both lines, where Flink would silently keep the
// later. A key repeated in one mapping is refused, as SnakeYAML does, and so
// is a second document (SnakeYAML: "expected a single document in the
// stream"). Scalars resolve as YAML 1.2's Core schema resolves them, the
// schema Flink 1.20 parses config.yaml with (core12Int): true and false are
// booleans, yes/no/on/off are text, which a boolean option refuses with
// Flink's message. A key Flink 1.20 documents that the
// simulator does not model is accepted (whatever its value, lists
// included) and returned in notSimulated, in file order, once each; a key
// neither knows is an error with the nearest key suggested, so a typo is
// never silently ignored.
//
// The file is read within input.SettingsLimits (size, line length), must
// be UTF-8 (a byte order mark and CRLF line ends are fine), and aliases are
// followed at most maxYAMLCollectionAliases times to a mapping and never
// into a mapping that contains them, so no file can hang the load or
// expand without bound.
//
// Every error found is reported, in file order, each as a *FileError naming
// FILE:LINE; they are joined with errors.Join. On any error c is unchanged.
func (c *Config) LoadYAML(path string) (notSimulated []string, err error) {
	data, err := input.ReadFile(path, input.SettingsLimits)
	if err != nil {
		var ie *input.Error
		if errors.As(err, &ie) {
			return nil, &FileError{File: path, Line: ie.Line, Err: inputErr{ie}}
		}
		return nil, &FileError{File: path, Err: err}
	}
	return c.loadYAML(path, data)
}

// LoadYAMLData is LoadYAML of a file's content already in memory (an
// embedded example), named name in errors; a content larger than
// input.SettingsLimits allows is refused as LoadYAML refuses the file.
func (c *Config) LoadYAMLData(name string, data []byte) (notSimulated []string, err error) {
	if int64(len(data)) > input.SettingsLimits.MaxBytes {
		return nil, &FileError{File: name, Err: fmt.Errorf("larger than %d bytes", input.SettingsLimits.MaxBytes)}
	}
	return c.loadYAML(name, data)
}

func (c *Config) loadYAML(name string, data []byte) ([]string, error) {
	data = input.Clean(data)
	if line, col := input.CheckUTF8(data); line > 0 {
		return nil, &FileError{File: name, Line: line, Err: fmt.Errorf("invalid UTF-8 at byte %d of the line: a settings file must be UTF-8 text", col)}
	}
	if line := input.BOMLine(data); line > 0 {
		return nil, &FileError{File: name, Line: line, Err: errors.New(input.BOMMessage(line))}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, yamlError(name, err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case err == io.EOF:
	case err != nil:
		return nil, yamlError(name, err)
	default:
		line := second.Line
		if len(second.Content) > 0 {
			line = second.Content[0].Line
		}
		return nil, &FileError{File: name, Line: line, Err: errors.New(
			"a second YAML document: a settings file is one document, like Flink's config.yaml (SnakeYAML: expected a single document in the stream)")}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty file or only comments
	}
	root := doc.Content[0]
	if root.Kind == yaml.AliasNode {
		return nil, &FileError{File: name, Line: root.Line, Err: errors.New("expected a mapping of setting keys to values")}
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &FileError{File: name, Line: root.Line, Err: errors.New("expected a mapping of setting keys to values")}
	}
	if n := countCollectionAliases(root, 0); n.count > maxYAMLCollectionAliases {
		return nil, &FileError{File: name, Line: n.line, Err: fmt.Errorf(
			"more than %d aliases to mappings or lists (Flink's SnakeYAML refuses them: Number of aliases for non-scalar nodes exceeds the specified max=%d)",
			maxYAMLCollectionAliases, maxYAMLCollectionAliases)}
	}
	next := *c
	var errs []error
	var notSim []string
	seenNotSim := map[string]bool{}
	fail := func(line int, err error) {
		if len(errs) < maxYAMLErrors {
			errs = append(errs, &FileError{File: name, Line: line, Err: err})
		}
	}
	settings := 0
	given := map[string]int{} // flattened key -> the line of its key, over the whole file
	var stack []*yaml.Node    // the mappings being walked, for cycles
	var walk func(prefix string, m *yaml.Node) bool
	walk = func(prefix string, m *yaml.Node) bool {
		stack = append(stack, m)
		defer func() { stack = stack[:len(stack)-1] }()
		seen := make(map[string]int, len(m.Content)/2)
		for i := 0; i+1 < len(m.Content); i += 2 {
			if len(errs) == maxYAMLErrors {
				return false // enough to fix first
			}
			k := m.Content[i]
			v, alias := m.Content[i+1], m.Content[i+1]
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if k.Kind == yaml.AliasNode {
				fail(k.Line, errors.New("a setting key must be plain text, not an alias"))
				continue
			}
			if k.Kind != yaml.ScalarNode {
				fail(k.Line, errors.New("a setting key must be plain text"))
				continue
			}
			if first, dup := seen[k.Value]; dup {
				fail(k.Line, fmt.Errorf("found duplicate key %s (first at line %d)", input.Cut(k.Value), first))
				continue
			}
			seen[k.Value] = k.Line
			if settings++; settings > maxYAMLSettings {
				fail(k.Line, fmt.Errorf("more than %d settings: a settings file holds a few hundred at most", maxYAMLSettings))
				return false
			}
			key := prefix + k.Value
			if v.Kind != yaml.MappingNode {
				if first, twice := given[key]; twice {
					fail(k.Line, fmt.Errorf("%s is given twice, at line %d and here (a flat and a nested form of one key): a settings file names each key once",
						input.Cut(key), first))
					continue
				}
				given[key] = k.Line
			}
			switch v.Kind {
			case yaml.MappingNode:
				if alias != v && slices.Contains(stack, v) {
					fail(alias.Line, fmt.Errorf("%s: the alias *%s names a mapping that contains it (an endless loop)", input.Cut(key), alias.Value))
					continue
				}
				if !walk(key+".", v) {
					return false
				}
			case yaml.ScalarNode:
				if v.Tag == "!!null" {
					if IsFlinkKey(key) {
						if _, simulated := index[key]; !simulated {
							note(&notSim, seenNotSim, key)
							continue
						}
					}
					fail(v.Line, fmt.Errorf("%s: a value is missing", input.Cut(key)))
					continue
				}
				if err := next.Set(key, core12Value(v.Value, v.Style)); err != nil {
					var ns *NotSimulatedError
					if errors.As(err, &ns) {
						note(&notSim, seenNotSim, key)
						continue
					}
					line := v.Line
					var unknown *UnknownKeyError
					if errors.As(err, &unknown) {
						line = k.Line
					}
					fail(line, err)
				}
			default:
				if _, simulated := index[key]; !simulated && IsFlinkKey(key) {
					note(&notSim, seenNotSim, key) // a list-typed Flink option, e.g. pipeline.jars
					continue
				}
				if _, simulated := index[key]; !simulated {
					fail(k.Line, &UnknownKeyError{Key: key, Suggestion: suggest(key)})
					continue
				}
				fail(v.Line, fmt.Errorf("%s: expected a single value, not a list", key))
			}
		}
		return true
	}
	walk("", root)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	*c = next
	return notSim, nil
}

// inputErr is an *input.Error inside a *FileError: its text without the
// file name, which the FileError prints.
type inputErr struct{ e *input.Error }

func (e inputErr) Error() string { return e.e.Msg }
func (e inputErr) Unwrap() error { return e.e.Err }

// aliasCount is how many alias nodes name a mapping or a list, and the
// line of the one past the limit.
type aliasCount struct{ count, line int }

// countCollectionAliases counts, without following them, the aliases in n
// that name a mapping or a list, as SnakeYAML's composer does against
// LoaderOptions.maxAliasesForCollections. Cost: one pass over the nodes as
// written.
func countCollectionAliases(n *yaml.Node, depth int) aliasCount {
	var out aliasCount
	if depth > 1000 {
		return out
	}
	for _, ch := range n.Content {
		if ch.Kind == yaml.AliasNode {
			if ch.Alias != nil && (ch.Alias.Kind == yaml.MappingNode || ch.Alias.Kind == yaml.SequenceNode) {
				out.count++
				if out.count == maxYAMLCollectionAliases+1 {
					out.line = ch.Line
				}
			}
			continue
		}
		sub := countCollectionAliases(ch, depth+1)
		if out.count <= maxYAMLCollectionAliases && out.count+sub.count > maxYAMLCollectionAliases && sub.line != 0 {
			out.line = sub.line
		} else if out.count <= maxYAMLCollectionAliases && out.count+sub.count > maxYAMLCollectionAliases {
			out.line = ch.Line
		}
		out.count += sub.count
	}
	return out
}

func note(list *[]string, seen map[string]bool, key string) {
	if !seen[key] {
		seen[key] = true
		*list = append(*list, key)
	}
}

// yamlError turns a yaml.v3 error into a *FileError with its line.
func yamlError(name string, err error) error {
	line, msg := 0, err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return &FileError{File: name, Line: line, Err: errors.New(input.Cut(msg))}
}
