package llm

import (
	"encoding/json"
	"math"
	"strings"
)

// IsOpenRouter reports whether m is served by OpenRouter, which adds what
// it billed to the usage it streams.
func IsOpenRouter(m *Model) bool {
	return m != nil && (m.Provider == "openrouter" || strings.Contains(m.BaseURL, "openrouter.ai"))
}

// OpenRouterBilled reads what OpenRouter says it billed from a streamed
// usage object (its cost, is_byok and cost_details members): the cost
// itself, or with the user's own key (BYOK) the cost plus the upstream
// provider's. ok is false when the accounting is missing or incomplete;
// the catalog's estimate then stands (pi's applyOpenRouterReportedCost).
func OpenRouterBilled(usage []byte) (total float64, ok bool) {
	var u struct {
		Cost        *float64 `json:"cost"`
		IsBYOK      *bool    `json:"is_byok"`
		CostDetails *struct {
			Upstream           json.RawMessage `json:"upstream_inference_cost"`
			UpstreamPrompt     *float64        `json:"upstream_inference_prompt_cost"`
			UpstreamCompletion *float64        `json:"upstream_inference_completions_cost"`
		} `json:"cost_details"`
	}
	if json.Unmarshal(usage, &u) != nil || !validCost(u.Cost) || u.IsBYOK == nil {
		return 0, false
	}
	if !*u.IsBYOK {
		return *u.Cost, true
	}
	d := u.CostDetails
	if d == nil {
		return 0, false
	}
	var upstream *float64
	switch raw := strings.TrimSpace(string(d.Upstream)); raw {
	case "":
		// Absent: not enough to go on.
	case "null":
		if !validCost(d.UpstreamPrompt) || !validCost(d.UpstreamCompletion) {
			return 0, false
		}
		upstream = new(*d.UpstreamPrompt + *d.UpstreamCompletion)
	default:
		var f float64
		if json.Unmarshal(d.Upstream, &f) == nil {
			upstream = &f
		}
	}
	if !validCost(upstream) {
		return 0, false
	}
	return *u.Cost + *upstream, true
}

func validCost(f *float64) bool {
	return f != nil && !math.IsInf(*f, 0) && !math.IsNaN(*f) && *f >= 0
}
