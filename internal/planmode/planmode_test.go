package planmode

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

type fake struct {
	name string
	ran  *[]string
}

func (f fake) Definition() tools.Definition { return tools.Definition{Name: f.name, Description: "d"} }
func (f fake) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "k:" + f.name}
}
func (f fake) Run(context.Context, jsontext.Value) tools.Result {
	*f.ran = append(*f.ran, f.name)
	return tools.Result{Content: f.name + " ran"}
}

func TestWrap(t *testing.T) {
	var ran []string
	planning := true
	ts := []tools.Tool{fake{"read", &ran}, fake{"bash", &ran}, fake{"write", &ran}, fake{"mcp__x__y", &ran}, fake{"diagnostics", &ran}, fake{"web_fetch", &ran}, fake{"web_search", &ran}}
	roBash := fake{"read-only bash", &ran}
	w := Wrap(ts, Config{Planning: func() bool { return planning }, ReadOnlyBash: func() (tools.Tool, error) { return roBash, nil }})
	for i := range ts {
		if w[i].Definition().Name != ts[i].Definition().Name || w[i].Definition().Description != ts[i].Definition().Description || w[i].Replay() != ts[i].Replay() {
			t.Fatalf("%s: the definition or replay changed", ts[i].Definition().Name)
		}
	}
	ctx := context.Background()
	for _, tl := range w {
		tl.Run(ctx, jsontext.Value(`{}`))
	}
	if len(ran) != 5 || ran[0] != "read" || ran[1] != "read-only bash" || ran[2] != "diagnostics" || ran[3] != "web_fetch" || ran[4] != "web_search" {
		t.Fatalf("in plan mode ran %v", ran)
	}
	if r := w[2].Run(ctx, jsontext.Value(`{}`)); !r.IsError || r != Refusal("write") {
		t.Fatalf("write: %+v", r)
	}
	planning, ran = false, nil
	for _, tl := range w {
		tl.Run(ctx, jsontext.Value(`{}`))
	}
	if len(ran) != 7 || ran[1] != "bash" {
		t.Fatalf("out of plan mode ran %v", ran)
	}
	planning = true
	w = Wrap(ts, Config{Planning: func() bool { return true }, ReadOnlyBash: func() (tools.Tool, error) { return nil, errors.New("no Landlock") }})
	if r := w[1].Run(ctx, jsontext.Value(`{}`)); !r.IsError {
		t.Fatal("bash ran without a read-only sandbox")
	}
	if got := Remind("x", true); got != "x\n\n"+Reminder || Remind(got, true) != got || Remind("x", false) != "x" || Strip(got) != "x" {
		t.Fatal("Remind")
	}
	if Strip("plan it <system-reminder>Plan mode is on: inv…") != "plan it" || Strip("plain") != "plain" {
		t.Fatal("Strip of a listing's cut prompt")
	}
}
