package tools

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestSelect(t *testing.T) {
	all := []string{"bash", "read", "write", "edit", "bg"}
	for _, tc := range []struct {
		flags []string
		want  []string
	}{
		{nil, all},
		{[]string{"read"}, []string{"read"}},
		{[]string{"edit,read", "bash"}, []string{"bash", "read", "edit"}},
		{[]string{" read , read,", "bg"}, []string{"read", "bg"}},
		{[]string{""}, []string{}},
	} {
		got, err := Select(tc.flags)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Select(%q) = %q, %v; want %q", tc.flags, got, err, tc.want)
		}
	}
	_, err := Select([]string{"read,grep"})
	var unknown *UnknownPluginError
	if !errors.As(err, &unknown) || unknown.Name != "grep" ||
		err.Error() != "Unknown plugin: grep. Available plugins: bash, read, write, edit, bg" {
		t.Fatalf("err %v", err)
	}
}

func TestBuiltinsDefinitions(t *testing.T) {
	dir := t.TempDir()
	m, _ := NewManager(dir)
	list, err := Builtins(Config{WorkDir: dir, Background: m})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list {
		def := tool.Definition()
		names = append(names, def.Name)
		if def.Description == "" || def.DefinitionIdentity != "" {
			t.Errorf("%s: definition %+v", def.Name, def)
		}
		var schema struct {
			Type       string                    `json:"type"`
			Properties map[string]jsontext.Value `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(def.Parameters, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: parameters %s: %v", def.Name, def.Parameters, err)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", def.Name, r)
			}
		}
		want := Replay{Policy: ReplayNever, Key: "builtin:" + def.Name + ":v1"}
		if def.Name == "read" {
			want.Policy = ReplaySafe
		}
		if tool.Replay() != want {
			t.Errorf("%s: replay %+v", def.Name, tool.Replay())
		}
	}
	if !slices.Equal(names, PluginNames()) {
		t.Fatalf("names %q", names)
	}

	list, err = Builtins(Config{WorkDir: dir, Plugins: []string{"edit", "read"}})
	if err != nil || len(list) != 2 || list[0].Definition().Name != "edit" {
		t.Fatalf("subset: %v %v", list, err)
	}
	if _, err := Builtins(Config{WorkDir: dir, Plugins: []string{"bg"}}); err == nil {
		t.Fatal("bg without a Manager accepted")
	}
	if _, err := Builtins(Config{WorkDir: "relative"}); err == nil {
		t.Fatal("relative working directory accepted")
	}
	if _, err := NewManager("relative"); err == nil {
		t.Fatal("relative manager directory accepted")
	}
}
