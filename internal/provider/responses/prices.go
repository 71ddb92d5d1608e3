package responses

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// price is a list price in US dollars per million tokens.
type price struct{ input, cachedInput, output float64 }

// prices are OpenAI's published list prices (standard tier) by model id
// prefix; the longest matching prefix wins. Reasoning tokens are billed as
// output and are part of output_tokens. Cost is display data: an unknown
// model shows none rather than a guess.
var prices = map[string]price{
	"gpt-5.2":            {1.75, 0.175, 14},
	"gpt-5.1-codex-mini": {0.25, 0.025, 2},
	"gpt-5.1":            {1.25, 0.125, 10},
	"gpt-5-codex":        {1.25, 0.125, 10},
	"gpt-5-mini":         {0.25, 0.025, 2},
	"gpt-5-nano":         {0.05, 0.005, 0.40},
	"gpt-5":              {1.25, 0.125, 10},
	"gpt-4.1-mini":       {0.40, 0.10, 1.60},
	"gpt-4.1-nano":       {0.10, 0.025, 0.40},
	"gpt-4.1":            {2, 0.50, 8},
	"gpt-4o-mini":        {0.15, 0.075, 0.60},
	"gpt-4o":             {2.50, 1.25, 10},
	"o4-mini":            {1.10, 0.275, 4.40},
	"o3":                 {2, 0.50, 8},
	"codex-mini":         {1.50, 0.375, 6},
}

// Price is the list price of usage u on model, or nil for an unknown one.
func Price(model string, u provider.Usage) *float64 {
	model = bareModel(model)
	best := ""
	for prefix := range prices {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return nil
	}
	p := prices[best]
	cost := (float64(u.Input)*p.input + float64(u.CacheRead)*p.cachedInput + float64(u.Output)*p.output) / 1e6
	return &cost
}

// windows are the context windows of OpenAI's models by id prefix (their
// model list does not say); the longest matching prefix wins.
var windows = map[string]int64{
	"gpt-5":      400000,
	"gpt-4.1":    1047576,
	"gpt-4o":     128000,
	"o3":         200000,
	"o4-mini":    200000,
	"codex-mini": 200000,
}

// ContextWindow is the context window of an OpenAI model in tokens, or 0
// when it is not known.
func ContextWindow(model string) int64 {
	model = bareModel(model)
	best := ""
	for prefix := range windows {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	return windows[best]
}
