package config

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The tables of settings in docs/configuration.md and README.md share the
// header below (README's may add columns after it). Each row is one
// setting; a cell names its flag, environment variable, JSON key or
// default in a code span (`--volume PATH`, `XFS3_VOLUME`, `volume`,
// `16G`) and is empty or a dash when there is none. A default cell with
// no code span ("generated") means the code's default is empty.
var settingsHeader = []string{"flag", "environment", "JSON key", "default"}

const (
	configDoc = "../docs/configuration.md"
	readme    = "../README.md"
)

// TestConfigurationDoc fails when docs/configuration.md's table of
// settings and the code disagree: a setting the doc lacks, a row for a
// setting that does not exist, or a flag, variable, key or default that
// differs.
func TestConfigurationDoc(t *testing.T) {
	rows, found, err := readSettingsTable(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("%s has no table with the header | %s |", configDoc, strings.Join(settingsHeader, " | "))
	}
	for _, p := range checkSettingsTable(configDoc, rows, codeSettings(t), true) {
		t.Error(p)
	}
}

// TestConfigurationDocExample loads every JSON block of
// docs/configuration.md as a config file: the examples use only keys
// that exist, with values that pass validation.
func TestConfigurationDocExample(t *testing.T) {
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) == 0 {
		t.Fatalf("%s has no ```json example", configDoc)
	}
	for i, b := range blocks {
		file := filepath.Join(t.TempDir(), "example.json")
		if err := os.WriteFile(file, []byte(b[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load([]string{"--config", file}, env(nil), io.Discard); err != nil {
			t.Errorf("%s: JSON example %d: %v", configDoc, i+1, err)
		}
	}
}

// TestREADMEConfiguration holds the README's table of settings, when it
// has one, to the same rule, except that it may list only some settings.
func TestREADMEConfiguration(t *testing.T) {
	rows, found, err := readSettingsTable(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Skipf("%s has no table of settings", readme)
	}
	for _, p := range checkSettingsTable(readme, rows, codeSettings(t), false) {
		t.Error(p)
	}
}

// TestSettingsTableCheck makes sure the check above catches drift: a
// table made from the code passes, and each kind of change to it is
// reported, naming the setting and the column.
func TestSettingsTableCheck(t *testing.T) {
	code := codeSettings(t)
	table := func(edit func([]setting) []setting) []tableRow {
		var b strings.Builder
		fmt.Fprintf(&b, "Intro.\n\n| %s |\n|---|---|---|---|\n", strings.Join(settingsHeader, " | "))
		for _, s := range edit(slices.Clone(code)) {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", span("--", s.flag), span("", s.env), span("", s.key), span("", s.def))
		}
		rows, found := parseSettingsTable(b.String())
		if !found {
			t.Fatalf("no table in\n%s", b.String())
		}
		return rows
	}
	at := func(key string) int {
		i := slices.IndexFunc(code, func(s setting) bool { return s.key == key })
		if i < 0 {
			t.Fatalf("the code has no setting %q", key)
		}
		return i
	}
	same := func(s []setting) []setting { return s }
	if p := checkSettingsTable("doc", table(same), code, true); len(p) > 0 {
		t.Fatalf("a table made from the code fails:\n%s", strings.Join(p, "\n"))
	}
	for _, c := range []struct {
		name     string
		complete bool
		edit     func([]setting) []setting
		want     []string // one problem, with each of these in it
	}{
		{"default", true, func(s []setting) []setting { s[at("size")].def = "8G"; return s },
			[]string{"setting size", "default", `"8G"`, `"16G"`}},
		{"no default", true, func(s []setting) []setting { s[at("addr")].def = ""; return s },
			[]string{"setting addr", "default", "none", `"127.0.0.1:9000"`}},
		{"flag", true, func(s []setting) []setting { s[at("gc_mode")].flag = "gcmode"; return s },
			[]string{"setting gc_mode", "flag", "--gcmode", "--gc-mode"}},
		{"environment", true, func(s []setting) []setting { s[at("cache_size")].env = "XFS3_CACHE"; return s },
			[]string{"setting cache_size", "environment", "XFS3_CACHE", "XFS3_CACHE_SIZE"}},
		{"JSON key", true, func(s []setting) []setting { s[at("log_flush")].key = "log_flush_interval"; return s },
			[]string{"setting log_flush", "JSON key", "log_flush_interval"}},
		{"missing", true, func(s []setting) []setting { return slices.Delete(s, at("durability"), at("durability")+1) },
			[]string{"no row", "durability", "XFS3_DURABILITY", "--durability"}},
		{"made up", false, func(s []setting) []setting { return append(s, setting{flag: "turbo", env: "XFS3_TURBO", key: "turbo"}) },
			[]string{"does not exist", "--turbo", "XFS3_TURBO"}},
		{"twice", false, func(s []setting) []setting { return append(s, s[at("volume")]) },
			[]string{"setting volume", "twice"}},
	} {
		p := checkSettingsTable("doc", table(c.edit), code, c.complete)
		if len(p) != 1 {
			t.Errorf("%s: want one problem, got %d:\n%s", c.name, len(p), strings.Join(p, "\n"))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(p[0], w) {
				t.Errorf("%s: %q does not say %q", c.name, p[0], w)
			}
		}
	}
	// A partial table (the README's) may leave settings out.
	if p := checkSettingsTable("README", table(func(s []setting) []setting { return s[:2] }), code, false); len(p) > 0 {
		t.Errorf("a partial table fails:\n%s", strings.Join(p, "\n"))
	}
}

// setting is one setting as the tables show it; an empty field is none.
type setting struct {
	flag string // without the leading dashes
	env  string
	key  string // the JSON key
	def  string // the default as written ("16G")
}

// name is how messages call s: its JSON key, else its variable or flag.
func (s setting) name() string {
	switch {
	case s.key != "":
		return s.key
	case s.env != "":
		return s.env
	}
	return "--" + s.flag
}

func (s setting) describe() string {
	return fmt.Sprintf("flag %s, environment %s, JSON key %s, default %s",
		show("--", s.flag), show("", s.env), show("", s.key), quoted(s.def))
}

func show(prefix, v string) string {
	if v == "" {
		return "none"
	}
	return prefix + v
}

func quoted(v string) string {
	if v == "" {
		return "none"
	}
	return fmt.Sprintf("%q", v)
}

func span(prefix, v string) string {
	if v == "" {
		return ""
	}
	return "`" + prefix + v + "`"
}

// codeSettings lists every setting Load reads, as the code defines them:
// the JSON keys of Config, the flags newFlagSet defines, the environment
// variables Load looks up and the values of Defaults.
func codeSettings(t *testing.T) []setting {
	t.Helper()
	defaults := Defaults()

	// JSON keys, as encoding/json names fields, with their defaults.
	var out []setting
	isKey := map[string]bool{}
	dv := reflect.ValueOf(defaults)
	for i := range dv.NumField() {
		f := dv.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "-" || !f.IsExported() {
			continue
		}
		if key == "" {
			key = f.Name
		}
		def := fmt.Sprint(dv.Field(i).Interface())
		if key == "volume" {
			def = filepath.ToSlash(def)
		}
		isKey[key] = true
		out = append(out, setting{key: key, def: def})
	}

	// Flags: each one is set to a probe value, which shows which setting
	// (or the config file) it fills.
	fs, file, flags := newFlagSet(defaults, io.Discard)
	flagOf := map[string]string{}
	var fileFlag string
	fs.VisitAll(func(f *flag.Flag) {
		probe := "probe-" + f.Name
		if err := fs.Set(f.Name, probe); err != nil {
			t.Errorf("flag --%s: %v", f.Name, err)
			return
		}
		if *file == probe {
			fileFlag = f.Name
			return
		}
		for key, v := range flags {
			if *v == probe {
				flagOf[key] = f.Name
				return
			}
		}
		t.Errorf("flag --%s fills no setting", f.Name)
	})
	for key := range flags {
		if !isKey[key] {
			t.Errorf("flag --%s fills %q, which is no JSON key of Config", flagOf[key], key)
		}
	}

	// Environment: envNames, and the one other variable Load looks up,
	// which names the config file.
	for key, env := range envNames {
		if !isKey[key] {
			t.Errorf("%s fills %q, which is no JSON key of Config", env, key)
		}
	}
	settingEnvs := slices.Collect(maps.Values(envNames))
	var fileEnv []string
	Load(nil, func(name string) (string, bool) {
		if !slices.Contains(settingEnvs, name) {
			fileEnv = append(fileEnv, name)
		}
		return "", false
	}, io.Discard)
	if len(fileEnv) != 1 || fileFlag == "" {
		t.Fatalf("want one flag and one variable for the config file, got --%s and %v", fileFlag, fileEnv)
	}

	for i := range out {
		out[i].flag = flagOf[out[i].key]
		out[i].env = envNames[out[i].key]
	}
	return append(out, setting{flag: fileFlag, env: fileEnv[0]})
}

// tableRow is a row of a table of settings; problem is set when a cell
// could not be read.
type tableRow struct {
	line    int
	s       setting
	problem string
}

// readSettingsTable reads the first table of settings in the file at
// path; found is false when it has none.
func readSettingsTable(path string) (rows []tableRow, found bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	rows, found = parseSettingsTable(string(data))
	return rows, found, nil
}

func parseSettingsTable(text string) (rows []tableRow, found bool) {
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		cells := tableCells(l)
		if len(cells) >= len(settingsHeader) && slices.Equal(cells[:len(settingsHeader)], settingsHeader) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	for i := start + 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		cells := tableCells(lines[i])
		r := tableRow{line: i + 1}
		if len(cells) < len(settingsHeader) {
			r.problem = fmt.Sprintf("has %d cells, want %d or more", len(cells), len(settingsHeader))
			rows = append(rows, r)
			continue
		}
		var problems []string
		cell := func(col int, prefix string) string {
			v, ok := cellValue(cells[col], prefix)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s column %q is neither empty nor a code span", settingsHeader[col], cells[col]))
			}
			return v
		}
		r.s = setting{flag: cell(0, "--"), env: cell(1, ""), key: cell(2, "")}
		r.s.def, _ = cellValue(cells[3], "")
		r.problem = strings.Join(problems, "; ")
		rows = append(rows, r)
	}
	return rows, true
}

// tableCells splits a markdown table line into its trimmed cells.
func tableCells(line string) []string {
	l := strings.TrimSpace(line)
	if !strings.HasPrefix(l, "|") {
		return nil
	}
	l = strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|")
	cells := strings.Split(l, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// cellValue is the first word of the cell's first code span, without
// prefix (which it must start with); "" for a cell that is empty, a dash
// or plain text, with ok false for plain text.
func cellValue(cell, prefix string) (v string, ok bool) {
	m := codeSpan.FindStringSubmatch(cell)
	if m == nil {
		switch cell {
		case "", "-", "–", "—":
			return "", true
		}
		return "", false
	}
	v = strings.TrimSpace(m[1])
	if prefix != "" {
		if f := strings.Fields(v); len(f) > 0 {
			v = f[0] // "--volume PATH": the flag, not its argument
		}
		if !strings.HasPrefix(v, prefix) {
			return "", false
		}
		v = strings.TrimPrefix(v, prefix)
	}
	return v, true
}

// checkSettingsTable compares a table's rows with the code's settings and
// returns one message per disagreement. A complete table must list every
// setting; any table lists each at most once and nothing else.
func checkSettingsTable(doc string, rows []tableRow, code []setting, complete bool) []string {
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", doc, line)+fmt.Sprintf(format, args...))
	}
	find := func(r setting) int {
		for _, id := range []struct {
			v  string
			of func(setting) string
		}{
			{r.key, func(s setting) string { return s.key }},
			{r.env, func(s setting) string { return s.env }},
			{r.flag, func(s setting) string { return s.flag }},
		} {
			if id.v == "" {
				continue
			}
			if i := slices.IndexFunc(code, func(s setting) bool { return id.of(s) == id.v }); i >= 0 {
				return i
			}
		}
		return -1
	}
	listed := map[int]int{} // code index -> line of its row
	for _, r := range rows {
		if r.problem != "" {
			bad(r.line, "row unreadable: %s", r.problem)
			continue
		}
		i := find(r.s)
		if i < 0 {
			bad(r.line, "lists a setting that does not exist (%s)", r.s.describe())
			continue
		}
		c := code[i]
		if first, ok := listed[i]; ok {
			bad(r.line, "setting %s is listed twice (first at line %d)", c.name(), first)
			continue
		}
		listed[i] = r.line
		for _, col := range []struct {
			name, doc, code string
		}{
			{"flag", show("--", r.s.flag), show("--", c.flag)},
			{"environment", show("", r.s.env), show("", c.env)},
			{"JSON key", show("", r.s.key), show("", c.key)},
			{"default", quoted(r.s.def), quoted(c.def)},
		} {
			if col.doc != col.code {
				bad(r.line, "setting %s: the %s column says %s, the code has %s", c.name(), col.name, col.doc, col.code)
			}
		}
	}
	if complete {
		for i, c := range code {
			if _, ok := listed[i]; !ok {
				problems = append(problems, fmt.Sprintf("%s: no row for setting %s (%s)", doc, c.name(), c.describe()))
			}
		}
	}
	return problems
}
