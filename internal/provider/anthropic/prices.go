package anthropic

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// price is a list price in US dollars per million tokens.
type price struct {
	input, output, cacheWrite, cacheRead float64
}

// prices are Anthropic's published list prices (5-minute cache writes),
// by model id prefix; the longest matching prefix wins, so dated ids
// ("claude-sonnet-4-5-20250929") find their family. Cost is display data:
// an unknown model shows none rather than a guess.
var prices = map[string]price{
	"claude-opus-4-5":   {5, 25, 6.25, 0.50},
	"claude-opus-4-1":   {15, 75, 18.75, 1.50},
	"claude-opus-4":     {15, 75, 18.75, 1.50},
	"claude-sonnet-4-5": {3, 15, 3.75, 0.30},
	"claude-sonnet-4":   {3, 15, 3.75, 0.30},
	"claude-3-7-sonnet": {3, 15, 3.75, 0.30},
	"claude-haiku-4-5":  {1, 5, 1.25, 0.10},
	"claude-3-5-haiku":  {0.80, 4, 1, 0.08},
	"claude-3-haiku":    {0.25, 1.25, 0.30, 0.03},
}

// webSearchPrice is the list price of one web search ($10 per 1,000).
const webSearchPrice = 0.01

// Price is the list price of usage u on model (a Messages API id or an
// OpenRouter-style "anthropic/..." id), or nil for an unknown model.
func Price(model string, u provider.Usage) *float64 {
	model = modelName(model)
	best, found := "", false
	for prefix := range prices {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best, found = prefix, true
		}
	}
	if !found {
		return nil
	}
	p := prices[best]
	cost := (float64(u.Input)*p.input + float64(u.Output)*p.output +
		float64(u.CacheWrite)*p.cacheWrite + float64(u.CacheRead)*p.cacheRead) / 1e6
	return &cost
}
